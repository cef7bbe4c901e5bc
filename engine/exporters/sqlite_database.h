// A trace as a SQLite database whose tables and columns are Perfetto trace processor's where
// Perfetto has them (slice, thread_track, thread, process, counter, counter_track, args, flow,
// metadata), so that queries written for Perfetto port, plus profsh's own (kernel, memory, op).
// docs/ANALYSIS.md ("SQL over a trace") lists the columns.
//
// The database is built in memory and either serialized through AtomicWriter (the "sqlite"
// exporter: a crash never leaves a torn file) or queried directly (`profsh sql`).
#pragma once

#include <string>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

// Runs one SQL statement on the tables of `trace` (built in memory first). A statement SQLite
// rejects is an error naming SQLite's message and the statement.
Result<AnalysisRows> QueryTrace(const Trace& trace, const std::string& sql);

// Runs one SQL statement on a SQLite database file (one `t:to_sqlite` wrote), read-only.
Result<AnalysisRows> QueryDatabaseFile(const std::string& path, const std::string& sql);

// Whether `path` starts with SQLite's file header.
bool IsSqliteFile(const std::string& path);

}  // namespace profsh
