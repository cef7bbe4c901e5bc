// Reads a rank summary file (summary_schema.h) back into a RankSummary, for the reduce
// (summary_job.h). A file that is not a summary, or is damaged, is an error naming the file and
// the table or column; a table a summary lacks is recorded, so that only the analyses needing it
// fail, each naming what is missing and how to get it.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "engine/summary/rank_summary.h"
#include "engine/util/result.h"

namespace profsh {

struct LoadedSummary {
  std::string path;  // the summary file
  RankSummary summary;
  // The tables this file lacks or cannot give (schema_summary.h's names) -> why, in words
  // ("no table steps", "table steps has no column end_ns").
  std::map<std::string, std::string> unavailable;
};

// What to read besides the rank, its steps and collectives: the reduce reads the top entries
// and the stored analyses only when an analysis asks for them (ReadSummaryAnalysis), so that a
// job of thousands of ranks is loaded in seconds and little memory.
struct SummaryParts {
  bool top_entries = true;  // step_operators, step_kernels
  bool analyses = true;     // every stored analysis' rows
};

Result<LoadedSummary> ReadRankSummary(const std::string& path, SummaryParts parts = {});

// One stored analysis' rows ("temporal_breakdown", ...); nullopt when the file has none of it.
Result<std::optional<AnalysisRows>> ReadSummaryAnalysis(const std::string& path,
                                                        const std::string& analysis);

}  // namespace profsh
