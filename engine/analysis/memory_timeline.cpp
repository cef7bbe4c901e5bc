#include "engine/analysis/memory_timeline.h"

#include <algorithm>
#include <map>

namespace profsh {

MemoryTimeline BuildMemoryTimeline(const Trace& t) {
  MemoryTimeline out;
  auto memory = t.strings.Find("[memory]");
  auto bytes_key = t.strings.Find("Bytes");
  if (memory && bytes_key) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (t.events.name(i) != *memory) continue;
      ArgValue v;
      if (!t.args.Get(t.events.args(i)).Find(*bytes_key, &v) || !v.is_number()) continue;
      out.points.push_back({t.events.ts(i), v.AsInt(), 0, t.events.track(i)});
    }
  }
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const MemoryPoint& a, const MemoryPoint& b) { return a.ts < b.ts; });
  std::map<std::string, ProcessMemory> per_process;
  for (MemoryPoint& p : out.points) {
    ProcessMemory& m = per_process[t.FormatIdent(t.tracks[p.track].pid)];
    m.at_end += p.bytes;
    if (m.at_end > m.peak) {
      m.peak = m.at_end;
      m.peak_ts = p.ts;
    }
    p.total = m.at_end;
  }
  for (auto& [pid, m] : per_process) {
    m.pid = pid;
    out.peak += m.peak;
    out.at_end += m.at_end;
    out.processes.push_back(std::move(m));
  }
  return out;
}

}  // namespace profsh
