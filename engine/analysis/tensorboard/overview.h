// The TensorBoard plugin's overview page as rows, each view computed once: the step time
// breakdown and its average, the GPU summary, the kernels with the most time and the
// recommendations (the plugin's, from these same views, and profsh's own). `profsh overview`
// prints it; a server answers one request with it.
#pragma once

#include <cstddef>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/tensorboard/recommendations.h"
#include "engine/trace/trace.h"

namespace profsh {

struct OverviewOptions {
  size_t top_kernels = 10;
  RecommendationOptions recommendations;
};

struct Overview {
  AnalysisRows steps;    // StepBreakdownRows
  AnalysisRows average;  // StepBreakdownAverageRows
  AnalysisRows gpus;     // GpuSummaryRows
  AnalysisRows kernels;  // KernelSummaryRows, the first top_kernels
  AnalysisRows recommendations;
};

Overview ComputeOverview(const Trace& trace, const OverviewOptions& options);

}  // namespace profsh
