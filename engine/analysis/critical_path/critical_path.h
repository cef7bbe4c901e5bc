// HTA's critical path analysis (hta/analyzers/critical_path_analysis.py) on the event model:
// the graph of one rank's CPU operators, runtime calls, kernels and synchronizations within an
// annotation's instances, its longest path, and that path broken down by what bounds it.
// docs/ANALYSIS.md ("Critical path") states the rules and where profsh differs from HTA.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/critical_path/cp_graph.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

struct CriticalPathOptions {
  // Events whose name contains it bound the window (HTA's `annotation`); "" is the whole trace.
  std::string annotation = "ProfilerStep";
  // The instances of the annotation, in trace order, from first to last (inclusive).
  int64_t first_instance = 0, last_instance = 0;
  // The rank whose tracks are analyzed (the trace's only rank when unset).
  std::optional<int32_t> rank;
  // Names (substrings) of events that count as data loading (HTA's data_load_events).
  std::vector<std::string> data_load_events;
  // HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE: a zero-weight edge from every launch to its
  // kernel, so that a what-if never starts a kernel before its launch.
  bool zero_weight_launch_edges = false;
  // HTA rounds a trace with sub-microsecond times to whole microseconds, each start up and each
  // end down (round_down_time_stamps); profsh keeps nanoseconds unless this is set.
  bool hta_rounding = false;
};

// An event's times as the graph reads them (ns): exact, or rounded as HTA rounds.
class CpTimes {
 public:
  CpTimes(const Trace& trace, bool hta_rounding);
  int64_t Ts(size_t ev) const { return round_ ? HtaStart(ev) : trace_.events.ts(ev); }
  int64_t End(size_t ev) const { return round_ ? HtaEnd(ev) : trace_.events.end(ev); }
  int64_t Dur(size_t ev) const { return End(ev) - Ts(ev); }

 private:
  // HTA's arithmetic: the time as the double JSON gives (µs), rounded up; the end as that
  // double plus the duration's, rounded down.
  int64_t WrittenOrigin() const;
  double StartMicros(size_t ev) const;
  int64_t HtaStart(size_t ev) const;
  int64_t HtaEnd(size_t ev) const;
  const Trace& trace_;
  bool round_ = false;  // set when asked and some time has a sub-microsecond part
};

struct CriticalPath {
  CpGraph graph;
  CpPath path;
  int64_t window_start = 0, window_end = 0;  // ns
  int32_t rank = 0;
  // What the analysis could not see (no CUDA synchronization events, ...) and how to record it.
  std::vector<std::string> notes;
};

Result<CriticalPath> AnalyzeCriticalPath(const Trace& trace, const CriticalPathOptions& options);

// The path's length in µs (the sum of its edges' weights).
double CriticalPathMicroseconds(const CpPath& path);

// The events that bound a window: the CPU-side events of `rank` (every rank when unset) whose
// name contains `annotation`, in trace order. Instance N of CriticalPathOptions is element N,
// and callers that name instances (the CLI's --step) must count with this very list.
std::vector<size_t> AnnotationInstances(const Trace& trace, const std::vector<int32_t>& rank_of_track,
                                        std::optional<int32_t> rank, std::string_view annotation);

// HTA's summary(): per bound_by (sorted by name, "" first), the percentage of the path's
// length. Columns: bound_by, pct, duration_us.
AnalysisRows CriticalPathSummary(const CriticalPath& cp, const CpPath& path);

// HTA's get_critical_path_breakdown(), one row per edge of the path in path order: edge, event
// (the attributed event's index, empty for none), name, ts (µs), dur (µs), pid, tid, stream,
// type, duration (µs, the edge's weight), bound_by.
AnalysisRows CriticalPathBreakdown(const Trace& trace, const CriticalPath& cp, const CpPath& path);

// Nodes (the path's, in order, or all of the graph's): node, event, name, ts (µs, the node's
// time), is_start, event_ts, event_dur (µs), pid, tid, stream.
AnalysisRows CriticalPathNodes(const Trace& trace, const CriticalPath& cp,
                               std::span<const uint32_t> nodes);

// Every edge of the graph (or of the path): edge, src, dst, type, weight (µs), event, bound_by,
// on_path.
AnalysisRows CriticalPathEdges(const Trace& trace, const CriticalPath& cp, const CpPath& path,
                               bool only_path);

}  // namespace profsh
