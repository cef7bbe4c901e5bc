// Reads a rank summary file (summary_schema.h) back into a RankSummary, for the reduce
// (summary_job.h). A file that is not a summary, or is damaged, is an error naming the file and
// the table or column; a table a summary lacks is recorded, so that only the analyses needing it
// fail, each naming what is missing and how to get it.
#pragma once

#include <map>
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

Result<LoadedSummary> ReadRankSummary(const std::string& path);

}  // namespace profsh
