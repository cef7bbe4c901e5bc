// The TensorBoard profiler plugin's views (engine/analysis/tensorboard): trace:step_breakdown(),
// trace:gpu_summary(), trace:kernel_summary(). The engine computes them; this file pushes rows,
// per rank on a multi-rank trace (the plugin reads one worker's trace at a time).
#include "bindings/lua_api.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/analysis/tensorboard/gpu_summary.h"
#include "engine/analysis/tensorboard/kernel_summary.h"
#include "engine/analysis/tensorboard/step_breakdown.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

TraceHandle* CheckTraceArg(lua_State* L, const char* function) {
  TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, function);
  Options opts(L, 2, function, {});  // no options: a table with any key is an error
  return h;
}

}  // namespace

// trace:step_breakdown(): a row per step; .average is the plugin's "Average Step Time" row with
// each category's percentage.
int TraceStepBreakdown(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "step_breakdown");
    std::vector<AnalysisRows> averages;
    AnalysisRows steps = PerRankRows(h, [&](const Trace& t) {
      const StepBreakdown breakdown = ComputeStepBreakdown(t);
      averages.push_back(StepBreakdownAverageRows(breakdown));
      return StepBreakdownRows(breakdown);
    });
    const std::vector<RankPart>& parts = RankParts(h);
    AnalysisRows average =
        parts.empty() ? std::move(averages.front()) : ConcatRanks(std::move(averages), parts);
    PushRows(L, std::move(steps), {{"average", std::move(average)}});
    return 1;
  });
}

int TraceGpuSummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "gpu_summary");
    PushRows(L, PerRankRows(h, [](const Trace& t) { return GpuSummaryRows(ComputeGpuSummary(t)); }),
             {});
    return 1;
  });
}

int TraceKernelSummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "kernel_summary");
    PushRows(
        L,
        PerRankRows(h, [](const Trace& t) { return KernelSummaryRows(ComputeKernelSummary(t)); }),
        {});
    return 1;
  });
}

}  // namespace profsh::lua
