// A trace as a SQLite database whose tables, columns, ids, views and functions are Perfetto
// trace processor's for what a Chrome JSON trace holds (slice, track, thread_track,
// process_track, counter_track, process_counter_track, thread, process, args, flow, counter,
// stats, metadata; extract_arg, ancestor_slice, descendant_slice, directly_connected_flow,
// following_flow, preceding_flow; the slices.with_context module), so that queries written for
// Perfetto port, plus profsh's own tables (kernel, memory, op). docs/ANALYSIS.md ("SQL over a
// trace") lists the columns and where profsh differs.
//
// The database is built in memory and either serialized through AtomicWriter (the "sqlite"
// exporter: a crash never leaves a torn file) or queried directly (`profsh sql`, t:sql, which
// keeps one TraceDatabase per loaded trace).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

namespace sqlite {
class Database;
}

// One trace's tables in memory, built once and queried any number of times. Queries may add
// TEMP tables and views of their own (they stay for the next query); the trace's own tables
// are read-only.
class TraceDatabase {
 public:
  static Result<std::shared_ptr<TraceDatabase>> Build(const Trace& trace);
  ~TraceDatabase();
  TraceDatabase(const TraceDatabase&) = delete;
  TraceDatabase& operator=(const TraceDatabase&) = delete;

  // Runs one SQL statement, after any leading INCLUDE PERFETTO MODULE statements. A statement
  // SQLite rejects is an error naming SQLite's message and the statement.
  Result<AnalysisRows> Query(const std::string& sql) const;

  // How many databases Build made in this process (tests check that a trace's is reused).
  static int64_t BuildCount();

 private:
  explicit TraceDatabase(std::unique_ptr<sqlite::Database> db);
  std::unique_ptr<sqlite::Database> db_;
};

// Runs one SQL statement on the tables of `trace`, in a database built for this query alone.
Result<AnalysisRows> QueryTrace(const Trace& trace, const std::string& sql);

// Runs one SQL statement on a SQLite database file (one `t:to_sqlite` wrote), read-only, with
// Perfetto's functions and modules.
Result<AnalysisRows> QueryDatabaseFile(const std::string& path, const std::string& sql);

// Whether `path` starts with SQLite's file header.
bool IsSqliteFile(const std::string& path);

}  // namespace profsh
