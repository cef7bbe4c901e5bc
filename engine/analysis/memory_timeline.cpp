#include "engine/analysis/memory_timeline.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/trace/kineto_schema.h"
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
  auto memory = t.strings.Find(kineto::kMemoryEvent);
  auto bytes_key = t.strings.Find(kineto::kBytes);
  auto type_key = t.strings.Find(kineto::kDeviceType);
  auto id_key = t.strings.Find(kineto::kDeviceId);
  if (memory && bytes_key) {
    std::map<std::pair<int64_t, int64_t>, uint32_t> device_index;
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (t.events.name(i) != *memory) continue;
      auto args = t.args.Get(t.events.args(i));
      ArgValue v;
      if (!args.Find(*bytes_key, &v) || !v.is_number()) continue;
      int64_t bytes = v.AsInt(), type = 0, id = 0;
      if (type_key && args.Find(*type_key, &v) && v.is_number()) type = v.AsInt();
      if (id_key && args.Find(*id_key, &v) && v.is_number()) id = v.AsInt();
      uint32_t device = 0;
      std::string name = MemoryDeviceName(type, id);
      if (name != "cpu") {
        auto [it, added] = device_index.emplace(std::make_pair(type, id),
                                                static_cast<uint32_t>(out.devices.size()));
        if (added) out.devices.push_back(name);
        device = it->second;
      }
      out.points.push_back({t.events.ts(i), bytes, 0, t.events.track(i), device});
    }
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
