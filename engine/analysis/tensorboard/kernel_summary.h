// The plugin's kernel view table (torch_tb_profiler 041e7ce, kernel_parser.py and
// run_generator.py's kernel table): one row per kernel name with its tensor-core use, calls,
// durations and the duration-weighted means of CUPTI's blocks per SM and achieved occupancy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"

namespace profsh {

struct KernelSummaryRow {
  std::string name;
  bool tensor_cores = false;
  int64_t calls = 0;
  double total_us = 0, mean_us = 0, max_us = 0, min_us = 0;
  // Weighted by duration, a kernel without the value counting as 0 (the plugin's fillna(0)).
  double blocks_per_sm = 0, achieved_occupancy_pct = 0;
};

struct KernelSummary {
  std::vector<KernelSummaryRow> rows;  // by total time, longest first (ties by name)
  // Some kernel has a positive blocks per SM / a non-negative occupancy: the plugin shows the
  // column only then.
  bool has_blocks_per_sm = false, has_occupancy = false;
  double tensor_core_time_ratio = 0;  // the kernel view's pie: tensor-core kernels' share of time
  std::vector<std::string> notes;
};

KernelSummary ComputeKernelSummary(const Trace& trace);

// name, tensor_cores, calls, total, mean, max, min (µs), blocks_per_sm, achieved_occupancy_pct
// (empty cells where the trace has no such values).
AnalysisRows KernelSummaryRows(const KernelSummary& summary);

}  // namespace profsh
