#include "engine/analysis/tensorboard/gpu_summary.h"

#include <algorithm>
#include <map>

#include "engine/analysis/model/device_properties.h"
#include "engine/analysis/tensorboard/tensor_core.h"

namespace profsh {

namespace {

struct DeviceKernels {
  std::vector<Interval> busy;
  std::vector<std::pair<Interval, double>> blocks_per_sm;  // kernels with a positive value
  std::vector<std::pair<Interval, double>> occupancy;      // kernels with a value >= 0
  int64_t operator_kernel_ns = 0, tensor_core_ns = 0;
};

// merge_ranges_with_value, then its intersection with the span and calculate_avg: the sum of
// the values of the kernels running, capped at 1, weighted by time, over the span's length.
std::optional<double> SmEfficiency(std::vector<std::pair<Interval, double>> kernels,
                                   Interval span) {
  struct Endpoint {
    int64_t t;
    bool end;
    double value;
  };
  std::vector<Endpoint> points;
  points.reserve(kernels.size() * 2);
  for (const auto& [iv, v] : kernels) {
    points.push_back({iv.ts, false, v});
    points.push_back({iv.end, true, v});
  }
  std::stable_sort(points.begin(), points.end(), [](const Endpoint& a, const Endpoint& b) {
    return a.t != b.t ? a.t < b.t : (!a.end && b.end);
  });
  double weighted = 0;
  bool any = false;
  double level = points.empty() ? 0.0 : points.front().value;  // the plugin starts from the first
  int64_t last = points.empty() ? 0 : points.front().t;
  for (size_t i = 1; i < points.size(); ++i) {
    const Endpoint& p = points[i];
    if (p.t > last && level > 0.0) {
      const int64_t lo = std::max(last, span.ts), hi = std::min(p.t, span.end);
      if (hi > lo) {
        weighted += std::min(level, 1.0) * static_cast<double>(hi - lo);
        any = true;
      }
    }
    last = p.t;
    level += p.end ? -p.value : p.value;
  }
  if (!any) return std::nullopt;
  return 100.0 * weighted / static_cast<double>(span.end - span.ts);
}

// calculate_occupancy: each kernel's occupancy weighted by its time inside the span.
std::optional<double> Occupancy(const std::vector<std::pair<Interval, double>>& kernels,
                                Interval span) {
  double weighted = 0;
  int64_t time = 0;
  for (const auto& [iv, v] : kernels) {
    const int64_t lo = std::max(iv.ts, span.ts), hi = std::min(iv.end, span.end);
    if (lo < hi) {
      weighted += v * static_cast<double>(hi - lo);
      time += hi - lo;
    }
  }
  if (time == 0) return std::nullopt;
  return weighted / static_cast<double>(time);
}

// The operator whose External id a runtime call carries, as event_parser.py attaches calls to
// operators (the first of that id), and whether tensor_cores_parser counts its kernels: a plain
// operator (cpu_op), not a step, data loader, optimizer or DataParallel forward.
bool LaunchedByOperator(const EventModel& model, const PluginEvents& events, uint32_t runtime) {
  const Trace& trace = model.trace();
  for (uint32_t r : model.links().RangeCandidatesOfRuntime(runtime)) {
    const uint32_t e = model.ids().ranges.event[r];
    const PluginTemplate& p = events.of(trace, e);
    const std::string_view name = trace.str(trace.events.name(e));
    const bool in_tree =
        p.type == PluginEventType::kOperator || p.type == PluginEventType::kPython ||
        (p.type == PluginEventType::kUserAnnotation &&
         (p.step || p.dataloader || p.collective || name.starts_with("Optimizer.step")));
    if (!in_tree) continue;
    return p.type == PluginEventType::kOperator && !p.step && !p.dataloader &&
           !name.starts_with("Optimizer.") && name != "DataParallel.forward" &&
           name != "DistributedDataParallel.forward";
  }
  return false;
}

std::string CapabilityText(int64_t major, int64_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace

GpuSummary ComputeGpuSummary(const EventModel& model, const PluginEvents& events,
                             const PluginSteps& steps) {
  GpuSummary out;
  const Trace& trace = model.trace();
  const EventTable& ev = trace.events;
  const EventIds& ids = model.ids();
  std::map<int64_t, DeviceKernels> devices;
  bool operators_launched_kernels = false;
  for (size_t k = 0; k < ids.device_work.size(); ++k) {
    const uint32_t e = ids.device_work.event[k];
    if (events.of(trace, e).type != PluginEventType::kKernel) continue;
    const int64_t device = ids.device_work.device[k];
    const Interval iv{ev.ts(e), ev.end(e)};
    const bool by_operator = events.runtime_of_work[k] != kNoIndex &&
                             LaunchedByOperator(model, events, events.runtime_of_work[k]);
    operators_launched_kernels |= by_operator;
    if (device == kNoId) continue;  // the plugin keeps kernels without args.device out
    DeviceKernels& d = devices[device];
    d.busy.push_back(iv);
    if (auto v = model.args().Number(e, KnownArg::kBlocksPerSm); v && *v > 0.0)
      d.blocks_per_sm.push_back({iv, *v});
    if (auto v = model.args().Number(e, KnownArg::kAchievedOccupancy); v && *v >= 0.0)
      d.occupancy.push_back({iv, *v});
    if (by_operator) {
      d.operator_kernel_ns += iv.end - iv.ts;
      if (PluginTensorCoreKernel(trace.str(ev.name(e)))) d.tensor_core_ns += iv.end - iv.ts;
    }
  }
  if (devices.empty()) {
    out.notes.push_back("no kernels on a device: no GPU summary");
    return out;
  }
  if (steps.empty()) {
    out.notes.push_back("no steps: no span to measure the GPUs over");
    return out;
  }
  const Interval span{steps.span_begin(), steps.span_end()};
  const std::vector<DeviceProperties> properties = ReadDeviceProperties(trace);
  for (auto& [device, d] : devices) {
    GpuSummaryRow row;
    row.device = device;
    if (device >= 0 && static_cast<size_t>(device) < properties.size()) {
      const DeviceProperties& p = properties[static_cast<size_t>(device)];
      row.name = p.name;
      row.memory_bytes = p.total_global_mem;
      if (p.compute_major && p.compute_minor)
        row.compute_capability = CapabilityText(*p.compute_major, *p.compute_minor);
    }
    const int64_t span_ns = span.end - span.ts;
    const int64_t busy = UnionLength(IntersectIntervals(MergeIntervals(d.busy), {span}));
    row.utilization_pct =
        span_ns > 0 ? 100.0 * static_cast<double>(busy) / static_cast<double>(span_ns) : 0.0;
    if (span_ns > 0) row.sm_efficiency_pct = SmEfficiency(std::move(d.blocks_per_sm), span);
    row.achieved_occupancy_pct = Occupancy(d.occupancy, span);
    if (operators_launched_kernels)
      row.tensor_core_pct = d.operator_kernel_ns > 0
                                ? 100.0 * static_cast<double>(d.tensor_core_ns) /
                                      static_cast<double>(d.operator_kernel_ns)
                                : 0.0;
    out.rows.push_back(std::move(row));
  }
  return out;
}

GpuSummary ComputeGpuSummary(const Trace& trace) {
  const EventModel& model = ModelOf(trace);
  const PluginEvents events = ReadPluginEvents(model);
  return ComputeGpuSummary(model, events, ComputePluginSteps(model, events));
}

AnalysisRows GpuSummaryRows(const GpuSummary& summary) {
  AnalysisRows rows;
  rows.columns = {"device",
                  "name",
                  "memory_bytes",
                  "compute_capability",
                  "utilization_pct",
                  "sm_efficiency_pct",
                  "achieved_occupancy_pct",
                  "tensor_core_pct"};
  auto number = [](const std::optional<double>& v) { return v ? Cell::Double(*v) : Cell::Empty(); };
  for (const GpuSummaryRow& r : summary.rows)
    rows.rows.push_back({Cell::Int(r.device), r.name ? Cell::Text(*r.name) : Cell::Empty(),
                         r.memory_bytes ? Cell::Int(*r.memory_bytes) : Cell::Empty(),
                         r.compute_capability ? Cell::Text(*r.compute_capability) : Cell::Empty(),
                         Cell::Double(r.utilization_pct), number(r.sm_efficiency_pct),
                         number(r.achieved_occupancy_pct), number(r.tensor_core_pct)});
  rows.notes = summary.notes;
  return rows;
}

}  // namespace profsh
