// Writes a RankSummary as a SQLite file (summary_schema.h's tables), atomically: the database is
// built in memory and its bytes go through AtomicWriter, so a crash or a full disk never leaves
// a torn summary for a reduce to read.
#pragma once

#include <string>

#include "engine/summary/rank_summary.h"
#include "engine/util/result.h"

namespace profsh {

Status WriteRankSummary(const RankSummary& summary, const std::string& path);

}  // namespace profsh
