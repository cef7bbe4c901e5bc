// The profsh Lua module. OpenProfsh() installs the global `profsh` (also `require "profsh"`),
// registers the userdata types and runs the embedded Lua prelude.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include <lua.h>
}

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/gpu_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/exporters/sqlite_database.h"
#include "engine/trace/trace.h"

namespace profsh::lua {

// What a Trace userdata holds: the trace and, once asked for, its operator view.
struct LaunchIndex;
struct RankLoadInfo;
struct RankPart;

struct TraceHandle {
  std::shared_ptr<Trace> trace;
  std::shared_ptr<const FunctionEvents> events;
  std::shared_ptr<const LaunchIndex> launches;    // built by the first t:launcher / t:kernels
  std::shared_ptr<const TraceDatabase> database;  // built by the first t:sql, then reused
  std::shared_ptr<const FunctionEvents> Events();
  // The operator view with another choice of ITT tasks (key_averages{itt_domains=...}), the
  // last one asked for.
  std::shared_ptr<const FunctionEvents> Events(const IttSelection& itt);
  // The device-side model, per include_last_profiler_step (+1) and exact_rounding (+2).
  std::shared_ptr<const GpuEvents> gpu_events[4];
  // A job's ranks (profsh.load_ranks): where each came from and its alignment; null otherwise.
  std::shared_ptr<const RankLoadInfo> rank_info;
  // Each rank's part of a multi-rank trace, made by the first per-rank analysis (lua_ranks.cpp).
  std::shared_ptr<const std::vector<RankPart>> rank_parts;
  // Events(itt)'s last view and its selection.
  std::shared_ptr<const FunctionEvents> events_by_itt;
  IttSelection events_by_itt_selection;
};

void OpenProfsh(lua_State* L);

// Building blocks used across the binding files.
void RegisterTrace(lua_State* L);       // expects the profsh table on top of the stack
void RegisterAverages(lua_State* L);    // likewise
void RegisterFlamegraph(lua_State* L);  // likewise
void RegisterProfile(lua_State* L);     // likewise
void RegisterDiff(lua_State* L);        // likewise: profsh.diff (lua_diff.cpp)
void RegisterServe(lua_State* L);       // likewise: profsh.serve (lua_serve.cpp)
int TraceFlamegraph(lua_State* L);      // trace:flamegraph(path, options)
int TraceLauncher(lua_State* L);        // trace:launcher(kernel_event) -> op, runtime call
int TraceKernels(lua_State* L);         // trace:kernels(op_event) -> device events
// A trace event as a Lua table: name, cat, kind, ph, pid, tid, ts, dur, args, index.
void PushEvent(lua_State* L, const Trace& t, size_t i);
int TraceSpeedscope(lua_State* L);  // trace:export_speedscope(path, options)
void RegisterRows(lua_State* L);
// Device-time analyses (lua_gpu.cpp), methods of Trace.
int TraceTemporalBreakdown(lua_State* L);
int TraceCommCompOverlap(lua_State* L);
int TraceKernelBreakdown(lua_State* L);
int TraceAnnotationBreakdown(lua_State* L);
int TraceIdleTimeBreakdown(lua_State* L);
int TraceKernelLaunchStats(lua_State* L);
int TraceQueueLengthSummary(lua_State* L);
int TraceCounters(lua_State* L);
int TraceStats(lua_State* L);        // Nsight Systems' reports
int TraceKernelTable(lua_State* L);  // PyProf's kernel table
// The TensorBoard profiler plugin's views (lua_tensorboard.cpp), methods of Trace.
int TraceStepBreakdown(lua_State* L);
int TraceGpuSummary(lua_State* L);
int TraceKernelSummary(lua_State* L);
// The cpu activity's samples (lua_samples.cpp).
int TraceSamples(lua_State* L);
int TraceHotspots(lua_State* L);
// The TensorBoard plugin's memory and module views (lua_tensorboard_more.cpp):
// trace:memory_summary(), trace:distributed_summary(), trace:module_summary().
int TraceMemorySummary(lua_State* L);
int TraceDistributedSummary(lua_State* L);
int TraceModuleSummary(lua_State* L);
// torch.compile's regions, graph breaks and kernel provenance (lua_compile.cpp).
int TraceCompileRegions(lua_State* L);
int TraceGraphBreaks(lua_State* L);
int TraceKernelProvenance(lua_State* L);
// The plugin's and profsh's recommendations (lua_recommendations.cpp).
int TraceRecommendations(lua_State* L);
// A distributed job's ranks (lua_ranks.cpp): profsh.load_ranks, trace:collectives(), trace.ranks.
void RegisterRanks(lua_State* L);      // expects the profsh table on top of the stack
void RegisterSummaries(lua_State* L);  // likewise (lua_summaries.cpp)
int TraceCollectives(lua_State* L);
void PushTraceRanks(lua_State* L, TraceHandle* h);
// The ranks of a trace with two or more (each with its own Trace, made once); empty for one.
const std::vector<RankPart>& RankParts(TraceHandle* h);
// A named selection of a result's rows (their indices): a list of the same row tables.
struct RowsSelection {
  const char* name;
  std::vector<uint32_t> rows;
};
// Pushes analysis rows (lua_rows.cpp); `lists` (other rows) and `selections` become named fields
// of the result (rows.name).
void PushRows(lua_State* L, AnalysisRows rows,
              std::vector<std::pair<const char*, AnalysisRows>> lists,
              std::vector<RowsSelection> selections = {});
void PushTrace(lua_State* L, std::shared_ptr<Trace> trace);
TraceHandle* TestTrace(lua_State* L, int index);
void PushKeyAverages(lua_State* L, KeyAverages averages);
class Options;
// The "torch_format" option of key_averages() and table(): "1.13" or "2"; none when absent.
std::optional<TorchFormat> ReadTorchFormat(const Options& opts, const char* function);
bool IsKeyAverages(lua_State* L, int index);
std::string FormatDuration(int64_t ns);

// The prelude's source, embedded at build time from bindings/prelude/*.lua.
extern const char* const kPreludeSource;
// Reports (lua_report.cpp): profsh.report and profsh.templates, from the report library and the
// built-in templates (bindings/prelude/report.lua, bindings/templates/*.lua, embedded).
void OpenReport(lua_State* L);  // expects the profsh table on top of the stack
extern const char* const kReportLibrarySource;
struct BuiltinTemplate {
  const char* name;
  const char* source;
};
extern const BuiltinTemplate kBuiltinTemplates[];
extern const size_t kBuiltinTemplateCount;

}  // namespace profsh::lua
