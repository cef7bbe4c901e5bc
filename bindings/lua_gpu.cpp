// The trace's device-time analyses (HTA's): trace:temporal_breakdown{...} and the others. The
// engine computes the rows (engine/analysis/gpu_*); this file reads options and pushes rows.
#include "bindings/lua_api.h"
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

const GpuEvents& GpuEventsOf(TraceHandle* h, const Options& opts) {
  bool include_last = opts.Bool("include_last_profiler_step", false);
  bool exact = opts.Bool("exact_rounding", false);
  auto& slot = h->gpu_events[(include_last ? 1 : 0) + (exact ? 2 : 0)];
  if (!slot) {
    GpuEventOptions options;
    options.include_last_profiler_step = include_last;
    options.exact_rounding = exact;
    slot = std::make_shared<const GpuEvents>(BuildGpuEvents(*h->trace, options));
  }
  return *slot;
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
    PushRows(L, TemporalBreakdown(GpuEventsOf(h, opts), opts.Bool("by_step", false)), {});
    return 1;
  });
}

int TraceCommCompOverlap(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "comm_comp_overlap");
    Options opts(L, 2, "comm_comp_overlap", {"include_last_profiler_step", "exact_rounding"});
    PushRows(L, CommCompOverlap(GpuEventsOf(h, opts)), {});
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
    KernelBreakdown b = ComputeKernelBreakdown(GpuEventsOf(h, opts), options, *h->trace);
    PushRows(L, std::move(b.by_type), {});
    PushRows(L, std::move(b.by_kernel), {});
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
    PushRows(L, AnnotationBreakdown(GpuEventsOf(h, opts), *h->trace, options), {});
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
    IdleTimeBreakdown b = ComputeIdleTimeBreakdown(GpuEventsOf(h, opts), options);
    PushRows(L, std::move(b.breakdown), {});
    PushRows(L, std::move(b.interval_stats), {});
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
    LaunchStats s = ComputeLaunchStats(GpuEventsOf(h, opts), options, *h->trace);
    std::vector<std::pair<const char*, AnalysisRows>> lists;
    lists.emplace_back("aten_op_delays", std::move(s.aten_op_delays));
    std::vector<RowsSelection> selections;
    selections.push_back({"short_kernels", std::move(s.short_kernels)});
    selections.push_back({"long_launches", std::move(s.long_launches)});
    selections.push_back({"long_delays", std::move(s.long_delays)});
    PushRows(L, std::move(s.launches), std::move(lists), std::move(selections));
    return 1;
  });
}

int TraceQueueLengthSummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "queue_length_summary");
    Options opts(L, 2, "queue_length_summary", {"include_last_profiler_step", "exact_rounding"});
    PushRows(L, QueueLengthSummary(GpuEventsOf(h, opts), *h->trace), {});
    return 1;
  });
}

int TraceCounters(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "counters");
    Options opts(L, 2, "counters", {"include_last_profiler_step", "exact_rounding"});
    PushRows(L, CounterSeries(GpuEventsOf(h, opts), *h->trace), {});
    return 1;
  });
}

// trace:stats(report): one of Nsight Systems' reports (engine/analysis/nsys_stats.h).
int TraceStats(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTraceArg(L, "stats");
    std::string report(CheckString(L, 2, "stats", "report name"));
    auto rows = NsysStatsReport(*h->trace, report);
    if (!rows.ok()) throw LuaError(rows.error().message);
    PushRows(L, std::move(rows.value()), {});
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
    PushRows(L, KernelTable(*h->trace, options), {});
    return 1;
  });
}

}  // namespace profsh::lua
