#include "engine/analysis/tensorboard/overview.h"

#include <numeric>

#include "engine/analysis/tensorboard/recommendation_inputs.h"

namespace profsh {

Overview ComputeOverview(const Trace& trace, const OverviewOptions& options) {
  const StepBreakdown steps = ComputeStepBreakdown(trace);
  const GpuSummary gpus = ComputeGpuSummary(trace);
  const KernelSummary kernels = ComputeKernelSummary(trace);
  const PluginRuleInputs plugin = PluginRuleInputsFrom(trace, steps, gpus, kernels);
  Overview o;
  o.steps = StepBreakdownRows(steps);
  o.average = StepBreakdownAverageRows(steps);
  o.gpus = GpuSummaryRows(gpus);
  AnalysisRows all_kernels = KernelSummaryRows(kernels);
  std::vector<uint32_t> top(std::min(options.top_kernels, all_kernels.rows.size()));
  std::iota(top.begin(), top.end(), 0u);
  o.kernels = all_kernels.Select(top);
  o.recommendations = RecommendationRows(trace, options.recommendations, &plugin);
  return o;
}

}  // namespace profsh
