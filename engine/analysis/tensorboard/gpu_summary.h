// The plugin's GPU summary (its overview's "GPU Summary"; torch_tb_profiler 041e7ce,
// gpu_metrics_parser.py, tensor_cores_parser.py, run_generator.py's _get_gpu_info): per device
// that ran kernels, its properties and, over the steps' span, utilization, estimated SM
// efficiency, estimated achieved occupancy and the kernel time on tensor cores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/tensorboard/plugin_steps.h"
#include "engine/trace/trace.h"

namespace profsh {

struct GpuSummaryRow {
  int64_t device = 0;
  // From the trace's deviceProperties entry at the device's position (as the plugin looks it up).
  std::optional<std::string> name;
  std::optional<int64_t> memory_bytes;
  std::optional<std::string> compute_capability;  // "8.0"
  double utilization_pct = 0;                     // kernel-busy time of the steps' span
  // The mean of min(Σ blocks per SM of the kernels running, 1) over the span; none without
  // blocks-per-SM values in it.
  std::optional<double> sm_efficiency_pct;
  // Kernels' occupancy weighted by their time in the span; none without occupancy values.
  std::optional<double> achieved_occupancy_pct;
  // Tensor-core kernels' share of the time of the kernels that operators launched; none when
  // operators launched no kernel.
  std::optional<double> tensor_core_pct;
};

struct GpuSummary {
  std::vector<GpuSummaryRow> rows;  // by device id
  std::vector<std::string> notes;
};

GpuSummary ComputeGpuSummary(const Trace& trace);
GpuSummary ComputeGpuSummary(const EventModel& model, const PluginEvents& events,
                             const PluginSteps& steps);

// device, name, memory_bytes, compute_capability, utilization_pct, sm_efficiency_pct,
// achieved_occupancy_pct, tensor_core_pct.
AnalysisRows GpuSummaryRows(const GpuSummary& summary);

}  // namespace profsh
