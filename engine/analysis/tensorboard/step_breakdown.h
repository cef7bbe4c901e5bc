// The TensorBoard profiler plugin's step time breakdown (its overview: "Step Time Breakdown" and
// "Average Step Time"; torch_tb_profiler 041e7ce, overall_parser.py and run_generator.py).
// Each step's time split by category in the plugin's priority order; docs/ANALYSIS.md,
// "TensorBoard views", says where profsh differs.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/tensorboard/plugin_steps.h"
#include "engine/trace/trace.h"

namespace profsh {

struct StepTimes {
  std::string step;
  // µs per StepCategory, then "other" (the step's time no category covers).
  std::array<double, static_cast<size_t>(StepCategory::kCount) + 1> us{};
  double total_us = 0;
};

struct StepBreakdown {
  std::vector<StepTimes> steps;
  StepTimes average;  // step "average": each category's mean over the steps
  // The average's share of each category in the average step time, in %.
  std::array<double, static_cast<size_t>(StepCategory::kCount) + 1> average_pct{};
  std::vector<std::string> notes;
};

StepBreakdown ComputeStepBreakdown(const Trace& trace);
// The same from steps already computed (a caller that needs them for other views too).
StepBreakdown ComputeStepBreakdown(const PluginSteps& steps);

// step, kernel, memcpy, memset, communication, runtime, dataloader, cpu_exec, other, total (µs).
AnalysisRows StepBreakdownRows(const StepBreakdown& breakdown);
// One row, step "average": the same columns, then kernel_pct ... other_pct.
AnalysisRows StepBreakdownAverageRows(const StepBreakdown& breakdown);

}  // namespace profsh
