#include "engine/analysis/tensorboard/kernel_summary.h"

#include <algorithm>
#include <unordered_map>

#include "engine/analysis/tensorboard/plugin_events.h"
#include "engine/analysis/tensorboard/tensor_core.h"

namespace profsh {

namespace {

struct Sums {
  int64_t calls = 0, total_ns = 0, max_ns = 0, min_ns = INT64_MAX;
  double blocks_weighted = 0, occupancy_weighted = 0;
};

}  // namespace

KernelSummary ComputeKernelSummary(const Trace& trace) {
  const EventModel& model = ModelOf(trace);
  const PluginEvents events = ReadPluginEvents(model);
  const EventIds& ids = model.ids();
  const EventTable& ev = trace.events;
  KernelSummary out;
  std::unordered_map<uint32_t, Sums> by_name;  // name string id -> sums
  for (size_t k = 0; k < ids.device_work.size(); ++k) {
    const uint32_t e = ids.device_work.event[k];
    if (events.of(trace, e).type != PluginEventType::kKernel) continue;
    const int64_t dur = ev.dur(e);
    Sums& s = by_name[ev.name(e)];
    ++s.calls;
    s.total_ns += dur;
    s.max_ns = std::max(s.max_ns, dur);
    s.min_ns = std::min(s.min_ns, dur);
    const std::optional<double> blocks = model.args().Number(e, KnownArg::kBlocksPerSm);
    const std::optional<double> occupancy = model.args().Number(e, KnownArg::kAchievedOccupancy);
    s.blocks_weighted += blocks.value_or(0.0) * static_cast<double>(dur);
    s.occupancy_weighted += occupancy.value_or(0.0) * static_cast<double>(dur);
    // gpu_metrics_parser counts only kernels with a device id.
    if (ids.device_work.device[k] != kNoId) {
      out.has_blocks_per_sm |= blocks.has_value() && *blocks > 0.0;
      out.has_occupancy |= occupancy.has_value() && *occupancy >= 0.0;
    }
  }
  int64_t all_ns = 0, tensor_core_ns = 0;
  for (const auto& [name, s] : by_name) {
    KernelSummaryRow row;
    row.name = std::string(trace.str(name));
    row.tensor_cores = PluginTensorCoreKernel(row.name);
    row.calls = s.calls;
    row.total_us = static_cast<double>(s.total_ns) / 1000.0;
    row.mean_us = row.total_us / static_cast<double>(s.calls);
    row.max_us = static_cast<double>(s.max_ns) / 1000.0;
    row.min_us = static_cast<double>(s.min_ns) / 1000.0;
    // np.average with weights that sum to 0 raises ZeroDivisionError: the plugin gives 0.
    if (s.total_ns > 0) {
      row.blocks_per_sm = s.blocks_weighted / static_cast<double>(s.total_ns);
      row.achieved_occupancy_pct = s.occupancy_weighted / static_cast<double>(s.total_ns);
    }
    all_ns += s.total_ns;
    if (row.tensor_cores) tensor_core_ns += s.total_ns;
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(),
            [](const KernelSummaryRow& a, const KernelSummaryRow& b) {
              return a.total_us != b.total_us ? a.total_us > b.total_us : a.name < b.name;
            });
  if (all_ns > 0)
    out.tensor_core_time_ratio = static_cast<double>(tensor_core_ns) / static_cast<double>(all_ns);
  if (out.rows.empty()) out.notes.push_back("no kernels in the trace");
  return out;
}

AnalysisRows KernelSummaryRows(const KernelSummary& summary) {
  AnalysisRows rows;
  rows.columns = {"name",          "tensor_cores",          "calls", "total", "mean", "max", "min",
                  "blocks_per_sm", "achieved_occupancy_pct"};
  for (const KernelSummaryRow& r : summary.rows)
    rows.rows.push_back(
        {Cell::Text(r.name), Cell::Text(r.tensor_cores ? "Yes" : "No"), Cell::Int(r.calls),
         Cell::Double(r.total_us), Cell::Double(r.mean_us), Cell::Double(r.max_us),
         Cell::Double(r.min_us),
         summary.has_blocks_per_sm ? Cell::Double(r.blocks_per_sm) : Cell::Empty(),
         summary.has_occupancy ? Cell::Double(r.achieved_occupancy_pct) : Cell::Empty()});
  rows.notes = summary.notes;
  return rows;
}

}  // namespace profsh
