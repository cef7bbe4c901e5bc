// The trace's device-time analyses (HTA's): trace:temporal_breakdown{...} and the others. The
// engine computes the rows (engine/analysis/gpu_*); this file reads options and pushes rows.
#include "bindings/lua_api.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/kernel_table.h"
#include "engine/analysis/nsys_stats.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

TraceHandle* CheckTraceArg(lua_State* L, const char* function) {
  return CheckUserdata<TraceHandle>(L, 1, kTraceType, function);
}

GpuEventOptions GpuOptions(const Options& opts) {
  GpuEventOptions options;
  options.include_last_profiler_step = opts.Bool("include_last_profiler_step", false);
  options.exact_rounding = opts.Bool("exact_rounding", false);
  return options;
}

const GpuEvents& GpuEventsOf(TraceHandle* h, const Options& opts) {
  const GpuEventOptions options = GpuOptions(opts);
  auto& slot = h->gpu_events[(options.include_last_profiler_step ? 1 : 0) +
                             (options.exact_rounding ? 2 : 0)];
  if (!slot) slot = std::make_shared<const GpuEvents>(BuildGpuEvents(*h->trace, options));
  return *slot;
}

// An analysis with `outputs` results, run on each rank of a multi-rank trace alone (HTA reads
// one rank's trace at a time) and concatenated; on the whole trace when it has one rank.
// `analysis(gpu_events, trace)` returns the results.
template <typename Analysis>
std::vector<AnalysisRows> PerRank(TraceHandle* h, const Options& opts, Analysis analysis) {
  const std::vector<RankPart>& parts = RankParts(h);
  if (parts.empty()) return analysis(GpuEventsOf(h, opts), *h->trace);
  std::vector<std::vector<AnalysisRows>> per_rank;
  for (const RankPart& p : parts)
    per_rank.push_back(analysis(BuildGpuEvents(*p.trace, GpuOptions(opts)), *p.trace));
  std::vector<AnalysisRows> out;
  for (size_t k = 0; k < per_rank.front().size(); ++k) {
    std::vector<AnalysisRows> results;
    for (auto& r : per_rank) results.push_back(std::move(r[k]));
    out.push_back(ConcatRanks(std::move(results), parts));
  }
  return out;
}

template <typename Analysis>
AnalysisRows PerRankOne(TraceHandle* h, const Options& opts, Analysis analysis) {
  return std::move(PerRank(h, opts, [&](const GpuEvents& g, const Trace& t) {
                     std::vector<AnalysisRows> v;
                     v.push_back(analysis(g, t));
                     return v;
                   }).front());
}

double Ratio(const Options& opts, const char* key, double fallback, const char* function) {
  double v = opts.Number(key).value_or(fallback);
  if (!(v >= 0 && v <= 1))
    throw LuaError(std::string("bad option '") + key + "' to '" + function +
                   "' (must be in [0, 1])");
  return v;
}

int64_t NonNegative(const Options& opts, const char* key, int64_t fallback, const char* function) {
  int64_t v = opts.Int(key, fallback);
  if (v < 0)
    throw LuaError(std::string("bad option '") + key + "' to '" + function + "' (must be >= 0)");
  return v;
}

// Calls `take` with each element of the list option `key` on top of the stack (absent: none);
// `take` returns false for an element of the wrong kind, which makes the option an error naming
// `expected`.
template <typename Take>
void ForEachListItem(const Options& opts, const char* key, const char* function,
                     const char* expected, Take take) {
  lua_State* L = opts.state();
  opts.Push(key);
  bool ok = lua_isnil(L, -1) || lua_istable(L, -1);
  if (ok && lua_istable(L, -1)) {
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; ok && i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      ok = take();
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  if (!ok)
    throw LuaError(std::string("bad option '") + key + "' to '" + function + "' (" + expected +
                   " expected)");
}

}  // namespace

int TraceTemporalBreakdown(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "temporal_breakdown");
    Options opts(L, 2, "temporal_breakdown",
                 {"by_step", "include_last_profiler_step", "exact_rounding"});
    const bool by_step = opts.Bool("by_step", false);
    PushRows(
        L,
        PerRankOne(h, opts,
                   [&](const GpuEvents& g, const Trace&) { return TemporalBreakdown(g, by_step); }),
        {});
    return 1;
  });
}

int TraceCommCompOverlap(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "comm_comp_overlap");
    Options opts(L, 2, "comm_comp_overlap", {"include_last_profiler_step", "exact_rounding"});
    PushRows(
        L, PerRankOne(h, opts, [](const GpuEvents& g, const Trace&) { return CommCompOverlap(g); }),
        {});
    return 1;
  });
}

int TraceKernelBreakdown(lua_State* L) {
  return Protect(L, [&] {
    const char* fn = "kernel_breakdown";
    TraceHandle* h = CheckTraceArg(L, fn);
    Options opts(L, 2, fn,
                 {"duration_ratio", "num_kernels", "include_memory_kernels",
                  "include_last_profiler_step", "exact_rounding"});
    KernelBreakdownOptions options;
    options.duration_ratio = Ratio(opts, "duration_ratio", 0.8, fn);
    options.num_kernels = NonNegative(opts, "num_kernels", 10, fn);
    options.include_memory_kernels = opts.Bool("include_memory_kernels", true);
    auto b = PerRank(h, opts, [&](const GpuEvents& g, const Trace& t) {
      KernelBreakdown k = ComputeKernelBreakdown(g, options, t);
      std::vector<AnalysisRows> v;
      v.push_back(std::move(k.by_type));
      v.push_back(std::move(k.by_kernel));
      return v;
    });
    PushRows(L, std::move(b[0]), {});
    PushRows(L, std::move(b[1]), {});
    return 2;
  });
}

int TraceAnnotationBreakdown(lua_State* L) {
  return Protect(L, [&] {
    const char* fn = "annotation_breakdown";
    TraceHandle* h = CheckTraceArg(L, fn);
    Options opts(L, 2, fn,
                 {"duration_ratio", "num_kernels", "allowlist_patterns", "use_gpu_annotation",
                  "include_last_profiler_step", "exact_rounding"});
    AnnotationBreakdownOptions options;
    options.duration_ratio = Ratio(opts, "duration_ratio", 0.8, fn);
    options.num_annotations = NonNegative(opts, "num_kernels", 1000, fn);
    options.use_gpu_annotation = opts.Bool("use_gpu_annotation", true);
    opts.Push("allowlist_patterns");
    const bool has_allowlist = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_allowlist) options.allowlist_patterns.emplace();
    ForEachListItem(opts, "allowlist_patterns", fn, "list of strings", [&] {
      if (lua_type(L, -1) != LUA_TSTRING) return false;
      options.allowlist_patterns->emplace_back(lua_tostring(L, -1));
      return true;
    });
    PushRows(L,
             PerRankOne(h, opts,
                        [&](const GpuEvents& g, const Trace& t) {
                          return AnnotationBreakdown(g, t, options);
                        }),
             {});
    return 1;
  });
}

int TraceIdleTimeBreakdown(lua_State* L) {
  return Protect(L, [&] {
    const char* fn = "idle_time_breakdown";
    TraceHandle* h = CheckTraceArg(L, fn);
    Options opts(
        L, 2, fn,
        {"consecutive_kernel_delay", "streams", "include_last_profiler_step", "exact_rounding"});
    IdleTimeOptions options;
    options.consecutive_kernel_delay = NonNegative(opts, "consecutive_kernel_delay", 30, fn);
    ForEachListItem(opts, "streams", fn, "list of integers", [&] {
      if (!lua_isinteger(L, -1)) return false;
      options.streams.push_back(lua_tointeger(L, -1));
      return true;
    });
    auto b = PerRank(h, opts, [&](const GpuEvents& g, const Trace&) {
      IdleTimeBreakdown i = ComputeIdleTimeBreakdown(g, options);
      std::vector<AnalysisRows> v;
      v.push_back(std::move(i.breakdown));
      v.push_back(std::move(i.interval_stats));
      return v;
    });
    PushRows(L, std::move(b[0]), {});
    PushRows(L, std::move(b[1]), {});
    return 2;
  });
}

int TraceKernelLaunchStats(lua_State* L) {
  return Protect(L, [&] {
    const char* fn = "kernel_launch_stats";
    TraceHandle* h = CheckTraceArg(L, fn);
    Options opts(L, 2, fn,
                 {"runtime_cutoff", "launch_delay_cutoff", "include_memory_events",
                  "include_last_profiler_step", "exact_rounding"});
    LaunchStatsOptions options;
    options.runtime_cutoff = NonNegative(opts, "runtime_cutoff", 50, fn);
    options.launch_delay_cutoff = NonNegative(opts, "launch_delay_cutoff", 100, fn);
    options.include_memory_events = opts.Bool("include_memory_events", true);
    // The selections are row indices: each rank's are moved past the rows before it.
    std::vector<uint32_t> short_kernels, long_launches, long_delays;
    uint32_t launches_before = 0;
    auto s = PerRank(h, opts, [&](const GpuEvents& g, const Trace& t) {
      LaunchStats ls = ComputeLaunchStats(g, options, t);
      const uint32_t offset = launches_before;
      for (uint32_t i : ls.short_kernels) short_kernels.push_back(offset + i);
      for (uint32_t i : ls.long_launches) long_launches.push_back(offset + i);
      for (uint32_t i : ls.long_delays) long_delays.push_back(offset + i);
      launches_before += static_cast<uint32_t>(ls.launches.rows.size());
      std::vector<AnalysisRows> v;
      v.push_back(std::move(ls.launches));
      v.push_back(std::move(ls.aten_op_delays));
      return v;
    });
    std::vector<std::pair<const char*, AnalysisRows>> lists;
    lists.emplace_back("aten_op_delays", std::move(s[1]));
    std::vector<RowsSelection> selections;
    selections.push_back({"short_kernels", std::move(short_kernels)});
    selections.push_back({"long_launches", std::move(long_launches)});
    selections.push_back({"long_delays", std::move(long_delays)});
    PushRows(L, std::move(s[0]), std::move(lists), std::move(selections));
    return 1;
  });
}

int TraceQueueLengthSummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "queue_length_summary");
    Options opts(L, 2, "queue_length_summary", {"include_last_profiler_step", "exact_rounding"});
    PushRows(
        L,
        PerRankOne(h, opts,
                   [](const GpuEvents& g, const Trace& t) { return QueueLengthSummary(g, t); }),
        {});
    return 1;
  });
}

int TraceCounters(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "counters");
    Options opts(L, 2, "counters", {"include_last_profiler_step", "exact_rounding"});
    PushRows(
        L,
        PerRankOne(h, opts, [](const GpuEvents& g, const Trace& t) { return CounterSeries(g, t); }),
        {});
    return 1;
  });
}

// trace:stats(report): one of Nsight Systems' reports (engine/analysis/nsys_stats.h).
int TraceStats(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "stats");
    std::string report(CheckString(L, 2, "stats", "report name"));
    PushRows(L,
             PerRankRows(h,
                         [&](const Trace& t) {
                           auto rows = NsysStatsReport(t, report);
                           if (!rows.ok()) throw LuaError(rows.error().message);
                           return std::move(rows.value());
                         }),
             {});
    return 1;
  });
}

// trace:kernel_table{tensor_core_patterns = {...}}: PyProf's table; the patterns extend the
// default tensor-core kernel-name list.
int TraceKernelTable(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "kernel_table");
    Options opts(L, 2, "kernel_table", {"tensor_core_patterns"});
    KernelTableOptions options;
    ForEachListItem(opts, "tensor_core_patterns", "kernel_table", "list of strings", [&] {
      if (lua_type(L, -1) != LUA_TSTRING) return false;
      options.tensor_core_patterns.emplace_back(lua_tostring(L, -1));
      return true;
    });
    PushRows(L, PerRankRows(h, [&](const Trace& t) { return KernelTable(t, options); }), {});
    return 1;
  });
}

}  // namespace profsh::lua
