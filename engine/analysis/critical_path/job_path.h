// The critical path of a trace that may hold several ranks: HTA's path of one rank when it holds
// one (or when asked not to link them), else every rank's graph linked at the collectives
// (cross_rank.h) and the job's path, which may end on a chosen rank. The one entry point for
// t:critical_path, `profsh critical-path` and the reports; what-if runs on its graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/critical_path/critical_path.h"
#include "engine/analysis/critical_path/cross_rank.h"
#include "engine/analysis/critical_path/whatif.h"

namespace profsh {

struct JobCriticalPathOptions {
  CriticalPathOptions path;  // its rank: where the path ends (any rank when unset)
  // false: only path.rank's own graph, as HTA sees one rank (the first rank when unset).
  bool link_ranks = true;
};

struct JobCriticalPath {
  // cp.graph is the job's graph (one rank's when not linked), cp.path its path; cp.rank the rank
  // the path ends on.
  CriticalPath cp;
  JobLayout layout;
  uint16_t end_part = kJobNoPart;  // the rank the path was asked to end on, or kJobNoPart
  bool linked = false;             // the ranks' graphs were linked
};

Result<JobCriticalPath> AnalyzeJobCriticalPath(const Trace& trace,
                                               const JobCriticalPathOptions& options);

// The what-if of a job's path (whatif.h), the path ending where the job's did; `start`: an
// earlier what-if's weights to change further (empty: the job's).
Result<WhatIfResult> JobWhatIf(const JobCriticalPath& job, const std::vector<WhatIfChange>& changes,
                               std::span<const int64_t> start = {});

// A path of the job's graph under `weights` (empty: the graph's), as rows: CriticalPathBreakdown's
// with a rank column after edge.
AnalysisRows JobBreakdown(const Trace& trace, const JobCriticalPath& job, const CpPath& path,
                          std::span<const int64_t> weights = {});
// CriticalPathSummary's rows under `weights`.
AnalysisRows JobSummary(const JobCriticalPath& job, const CpPath& path,
                        std::span<const int64_t> weights = {});
// What the path's time goes to, per (rank, name, bound_by) of the edges' events: rank, name,
// bound_by, edges, duration (µs), pct of the path; the largest first, at most `limit` rows (0:
// all).
AnalysisRows TopContributors(const Trace& trace, const JobCriticalPath& job, const CpPath& path,
                             size_t limit, std::span<const int64_t> weights = {});

}  // namespace profsh
