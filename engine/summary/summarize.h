// `profsh summarize` and `profsh run --summary`: a trace file (or a Trace already in memory) to
// its rank summary file, the rank found as load_ranks finds it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

// The file name of rank r's summary in a folder: rank-R.summary.sqlite.
std::string SummaryFileName(int32_t rank);

}  // namespace profsh
