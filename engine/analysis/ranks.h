// The ranks of a distributed job in one Trace: which rank each track belongs to, the collectives
// each rank called, matched across ranks, and the cross-rank view of any analysis's rows.
// docs/ANALYSIS.md ("Many ranks") defines every column.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"

namespace profsh {

// The "rank N" label profsh gives each process of a rank (the process_labels metadata that
// load_ranks writes and `profsh run` writes from the launcher's RANK); -1 when absent.
int64_t RankOfLabels(std::string_view labels);

// The trace's own rank as written: "distributedInfo": {"rank": N}; none when it names none.
std::optional<int64_t> DistributedRank(const Trace& trace);

// The rank of every track: its process's "rank N" label, else the trace's distributedInfo rank,
// else 0.
std::vector<int32_t> RankOfTrack(const Trace& trace);

// The distinct ranks of a trace, ascending.
std::vector<int32_t> RanksOf(const std::vector<int32_t>& rank_of_track);

// One call of a collective on one rank. On a GPU trace NCCL's kernels (ncclKernel_*,
// ncclDevKernel_*) are the collectives; otherwise the CPU operators that run them
// (record_param_comms, else gloo:* and nccl:*, else the dispatcher's c10d::* ops).
struct CollectiveCall {
  int32_t rank;
  std::string group;  // process group: the "Process Group Name" argument, else "default"
  std::string name;   // the collective in lower case without '_' ("allreduce"): kernels
                      // and host operators of one collective match
  int64_t seq;        // the "Seq" argument, else its position among the rank's calls of
                      // (group, name, device or host)
  int64_t ts, end;    // ns
  bool device;
  uint32_t event;  // the call's event in the trace
};
std::vector<CollectiveCall> CollectiveCalls(const Trace& trace,
                                            const std::vector<int32_t>& rank_of_track);

// Where collectives are read from, in order of preference (the first one present in a trace is
// the one CollectiveCalls reads).
enum class CollectiveSource : uint8_t {
  kNone,
  kDeviceKernel,  // NCCL's kernels
  kParamComms,    // record_param_comms
  kHostOp,        // gloo:*, nccl:*
  kDispatcherOp,  // c10d::*
};
const char* CollectiveSourceName(CollectiveSource source);  // "device_kernel", ...
// The sources a trace holds, in order of preference. A rank summary keeps the calls of each, so
// that a reduce over many ranks picks the source the whole job has, as CollectiveCalls does on
// the ranks loaded together.
std::vector<CollectiveSource> CollectiveSourcesIn(const Trace& trace);
// The calls of one source (CollectiveCalls with the source chosen by the caller).
std::vector<CollectiveCall> CollectiveCallsOf(const Trace& trace,
                                              const std::vector<int32_t>& rank_of_track,
                                              CollectiveSource source);

struct CollectiveAnalysis {
  // Per matched collective and rank: group, name, seq, rank, start, end, duration,
  // arrival_skew (its start after the first rank's), wait (the last rank's start after its
  // own: time spent waiting for the others), last (1 for the rank that arrived last).
  AnalysisRows calls;
  // Per rank: rank, collectives, last_arrivals, mean_arrival_skew, max_arrival_skew,
  // total_wait; ordered by last_arrivals (the straggler first).
  AnalysisRows ranks;
  int32_t straggler = -1;  // the rank that arrived last most often; -1 without collectives
};
CollectiveAnalysis AnalyzeCollectives(const Trace& trace);

// The same analysis on calls already gathered (one trace's, or a job's summaries'), their times
// on the job's aligned clock; `ranks` are the job's ranks, ascending. `no_calls_note` says why a
// job without calls has none.
CollectiveAnalysis AnalyzeCollectiveCalls(const std::vector<CollectiveCall>& calls,
                                          const std::vector<int32_t>& ranks,
                                          const std::string& no_calls_note);

// What CollectiveCalls found nothing of, for the note of a job without collectives.
extern const char* const kNoCollectivesNote;

// The ends of every collective that each of `rank_count` ranks called exactly once, by rank
// (the anchors of the "collective" alignment and of the skew left after any alignment).
std::vector<std::map<int32_t, int64_t>> MatchedCollectiveEnds(
    const std::vector<CollectiveCall>& calls, size_t rank_count);

// Each rank's rows of one analysis (results[k] is ranks[k]'s), concatenated in that order with a
// "rank" column first where the rows have none; the columns of every rank's rows by name in
// first-seen order, a rank's rows leaving the columns it lacks empty; notes prefixed "rank r: ".
AnalysisRows ConcatRankRows(std::vector<AnalysisRows> results, const std::vector<int32_t>& ranks);

// Rows with a "rank" column as one row per key (the other text columns): for every numeric
// column, its min, median, max and the rank of the max over ranks ("<col>_min", ...).
AnalysisRows CrossRankView(const AnalysisRows& rows);

}  // namespace profsh
