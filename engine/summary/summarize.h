// `profsh summarize` and `profsh run --summary`: a trace file (or a Trace already in memory) to
// its rank summary file, the rank found as load_ranks finds it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/summary/rank_summary.h"
#include "engine/util/result.h"

namespace profsh {

struct SummarizeOptions {
  std::optional<int64_t> rank;  // for a trace that names none (no distributedInfo.rank, no rank-N)
  size_t top_operators = 20, top_kernels = 20;
};

// The rank of a trace as load_ranks decides it: distributedInfo.rank, else rank-N in the file
// name, else `given`; an error names the file when there is none.
Result<std::pair<int32_t, std::string>> SummaryRank(const Trace& trace, const std::string& path,
                                                    std::optional<int64_t> given);

// Summarizes `trace` (read from `path`) into `out`; returns its rank.
Result<int32_t> SummarizeTrace(const Trace& trace, const std::string& path, const std::string& out,
                               const SummarizeOptions& options);

// Loads `path` and summarizes it into `out`.
Result<int32_t> SummarizeTraceFile(const std::string& path, const std::string& out,
                                   const SummarizeOptions& options);

// A trace whose processes are several ranks (their "rank N" labels: a `profsh run` of a job):
// one summary per rank in `folder` (made if missing), each computed from that rank's part of
// the trace, `rank_from` saying how the ranks were found; a trace of one rank gives one (its
// label's rank, else 0). Returns the ranks.
Result<std::vector<int32_t>> SummarizeEachRank(const Trace& trace, const std::string& trace_path,
                                               const std::string& folder,
                                               const SummarizeOptions& options,
                                               const std::string& rank_from);

// The ranks of a trace's processes (their "rank N" labels, else its distributedInfo, else 0).
std::vector<int32_t> LabelledRanks(const Trace& trace);

// The file name of rank r's summary in a folder: rank-R.summary.sqlite.
std::string SummaryFileName(int32_t rank);

}  // namespace profsh
