#include "engine/analysis/memory_timeline.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/analysis/model/memory_records.h"
#include "engine/util/saturating.h"

namespace profsh {

std::string MemoryDeviceName(int64_t device_type, int64_t device_id) {
  // c10::DeviceType: 0 CPU, 1 CUDA, 2 MKLDNN, 5 IDEEP (host memory), 6 HIP.
  if (device_type == 0 || device_type == 2 || device_type == 5) return "cpu";
  std::string kind = device_type == 1   ? "cuda"
                     : device_type == 6 ? "hip"
                                        : "device" + std::to_string(device_type);
  return kind + ":" + std::to_string(device_id);
}

MemoryTimeline BuildMemoryTimeline(const Trace& t) {
  MemoryTimeline out;
  out.devices.push_back("cpu");
  std::map<std::pair<int64_t, int64_t>, uint32_t> device_index;
  for (const MemoryRecord& r : MemoryRecordsOf(t)) {
    uint32_t device = 0;
    std::string name = MemoryDeviceName(r.device_type, r.device_id);
    if (name != "cpu") {
      auto [it, added] = device_index.emplace(std::make_pair(r.device_type, r.device_id),
                                              static_cast<uint32_t>(out.devices.size()));
      if (added) out.devices.push_back(name);
      device = it->second;
    }
    out.points.push_back({t.events.ts(r.event), r.bytes, 0, t.events.track(r.event), device});
  }
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const MemoryPoint& a, const MemoryPoint& b) { return a.ts < b.ts; });
  std::map<std::pair<std::string, std::string>, ProcessMemory> per_process;
  for (MemoryPoint& p : out.points) {
    ProcessMemory& m = per_process[{t.FormatIdent(t.tracks[p.track].pid), out.devices[p.device]}];
    m.at_end = SaturatingAdd(m.at_end, p.bytes);  // hostile sizes would overflow it
    if (m.at_end > m.peak) {
      m.peak = m.at_end;
      m.peak_ts = p.ts;
    }
    p.total = m.at_end;
  }
  for (auto& [key, m] : per_process) {
    m.pid = key.first;
    m.device = key.second;
    if (m.device == "cpu") {
      out.peak = SaturatingAdd(out.peak, m.peak);
      out.at_end = SaturatingAdd(out.at_end, m.at_end);
    }
    out.processes.push_back(std::move(m));
  }
  return out;
}

}  // namespace profsh
