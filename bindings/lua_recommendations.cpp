// trace:recommendations{gpu_gap_us=, min_short_kernels=, short_kernel_share=, evidence_names=}:
// the plugin's rules and profsh's own, as rows of rule, source, text, evidence, time_at_stake
// (engine/analysis/tensorboard/recommendations.h). On a job's ranks, each rank's rows.
#include <string>

#include "bindings/lua_api.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/analysis/tensorboard/recommendation_inputs.h"
#include "engine/analysis/tensorboard/recommendations.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

[[noreturn]] void BadOption(const char* key, const char* function, const char* expected) {
  throw LuaError(std::string("bad option '") + key + "' to '" + function + "' (" + expected + ")");
}

RecommendationOptions ReadOptions(const Options& opts, const char* fn) {
  RecommendationOptions o;
  const double gap_us = opts.Number("gpu_gap_us").value_or(o.gpu_gap_ns / 1000.0);
  if (!(gap_us >= 0)) BadOption("gpu_gap_us", fn, "must be >= 0");
  o.gpu_gap_ns = static_cast<int64_t>(gap_us * 1000.0 + 0.5);
  o.min_short_kernels = opts.Int("min_short_kernels", o.min_short_kernels);
  if (o.min_short_kernels < 0) BadOption("min_short_kernels", fn, "must be >= 0");
  o.short_kernel_share = opts.Number("short_kernel_share").value_or(o.short_kernel_share);
  if (!(o.short_kernel_share >= 0 && o.short_kernel_share <= 1))
    BadOption("short_kernel_share", fn, "must be in [0, 1]");
  const int64_t names = opts.Int("evidence_names", static_cast<int64_t>(o.evidence_names));
  if (names < 1) BadOption("evidence_names", fn, "must be >= 1");
  o.evidence_names = static_cast<size_t>(names);
  return o;
}

}  // namespace

int TraceRecommendations(lua_State* L) {
  return Protect(L, [&] {
    const char* fn = "recommendations";
    TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, fn);
    Options opts(L, 2, fn,
                 {"gpu_gap_us", "min_short_kernels", "short_kernel_share", "evidence_names"});
    const RecommendationOptions options = ReadOptions(opts, fn);
    PushRows(L,
             PerRankRows(h,
                         [&](const Trace& t) {
                           const PluginRuleInputs plugin = PluginRuleInputsOf(t);
                           return RecommendationRows(t, options, &plugin);
                         }),
             {});
    return 1;
  });
}

}  // namespace profsh::lua
