// The reduce: a distributed job's rank summaries (profsh.load_summaries) analysed job-wide
// without the traces: alignment, collectives with arrival skew, waits and the straggler, each
// rank's stored analyses side by side, the slowest rank of each step and the ranks whose step
// times drift. Every number is the one profsh.load_ranks gives on the traces; an analysis that
// needs what a summary lacks is an error naming the file, the missing table and how to get it.
// docs/ANALYSIS.md ("Many ranks from summaries") defines the columns.
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/ranks.h"
#include "engine/load/rank_alignment.h"
#include "engine/load/rank_loader.h"
#include "engine/summary/summary_reader.h"

namespace profsh {

struct SummaryJobOptions {
  std::vector<std::string> paths;  // summary files; the first one's clock origin is the job's
  RankAlignment align = RankAlignment::kMin;
  bool allow_missing = false;  // ranks 0..max need not all be there
};

struct SummaryJob {
  std::vector<LoadedSummary> summaries;  // by rank
  std::vector<RankSource> ranks;  // by rank: path is the summary's, offset_ns the alignment's
  RankAlignment align = RankAlignment::kMin;
  ResidualSkew skew;  // of the aligned collectives (matched = 0 without any)
  // The job's collectives on its aligned clock, of the one source every rank is read from (the
  // most exact present in any rank, as load_ranks picks on the merged trace).
  std::vector<CollectiveCall> calls;
  std::vector<std::string> notes;  // what the reduce could not do (a summary without collectives)
};

// A folder's .sqlite files, or a glob pattern's matches, sorted; an error names the pattern.
Result<std::vector<std::string>> ResolveSummaryPaths(const std::string& dir_or_glob);

Result<SummaryJob> LoadSummaryJob(const SummaryJobOptions& options);

// t:collectives() of load_ranks: the same rows, ranks and straggler.
Result<CollectiveAnalysis> JobCollectives(const SummaryJob& job);

// Every rank's rows of a stored analysis ("temporal_breakdown", "temporal_breakdown_by_step",
// "comm_comp_overlap", "step_breakdown", "step_breakdown_average"), as load_ranks' per-rank
// analyses give them: in rank order, a rank column first where the rows have none.
Result<AnalysisRows> JobAnalysis(const SummaryJob& job, const std::string& analysis);

// Per rank and ProfilerStep#N: rank, step, start (µs, aligned), duration (µs).
Result<AnalysisRows> JobStepTimes(const SummaryJob& job);

// Per step every rank has: step, slowest_rank, duration, median (over ranks), excess (duration -
// median), second_rank, second_duration.
Result<AnalysisRows> SlowestRanksPerStep(const SummaryJob& job);

// Per rank: rank, steps, mean_step, slope (µs per step, least squares), drift (slope - the
// ranks' median slope), drift_over_steps (drift times the steps spanned), drifting (1 when
// |drift_over_steps| exceeds kDriftShare of the job's median step time); drifting ranks first,
// then by |drift| descending.
inline constexpr double kDriftShare = 0.05;
Result<AnalysisRows> DriftingRanks(const SummaryJob& job);

}  // namespace profsh
