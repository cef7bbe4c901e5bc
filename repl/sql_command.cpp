#include "repl/sql_command.h"

#include <cstdio>
#include <string>

#include "engine/exporters/exporter.h"
#include "engine/exporters/sqlite_database.h"
#include "engine/load/trace_loader.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kSqlUsage[] =
    "usage: profsh sql TRACE QUERY [--format table|csv]\n"
    "\n"
    "Runs one SQL statement (SQLite's dialect) over the tables of TRACE, any trace profsh loads\n"
    "or a database profsh export --sqlite wrote, and prints its rows. The tables, columns and\n"
    "ids are Perfetto trace processor's (slice, track, thread_track, process_track,\n"
    "counter_track, process_counter_track, thread, process, args, flow, counter, stats,\n"
    "metadata; times in ns), with its extract_arg, ancestor_slice, descendant_slice,\n"
    "directly_connected_flow, following_flow and preceding_flow, plus profsh's kernel, memory\n"
    "and op. A query may start with INCLUDE PERFETTO MODULE slices.with_context; (thread_slice,\n"
    "process_slice, thread_or_process_slice).\n"
    "\n"
    "  profsh sql trace.json.gz \"SELECT name, sum(dur) FROM slice GROUP BY name\"\n"
    "\n"
    "Exit status: 0, 1 when the trace does not load or SQLite rejects the query, 2 for a usage\n"
    "error.\n";

constexpr char kExportUsage[] =
    "usage: profsh export --sqlite OUT TRACE\n"
    "\n"
    "Writes TRACE (any trace profsh loads) as a SQLite database OUT with Perfetto trace\n"
    "processor's tables (see profsh sql --help). OUT appears atomically.\n";

}  // namespace

int RunSqlCommand(int argc, char** argv) {
  CommandLine cl("profsh sql", argc, argv, {"--format", "--help"});
  std::string input, query, format = "table";
  bool has_query = false;
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kSqlUsage, stdout);
      return 0;
    }
    if (a == "--format") {
      format = cl.Value("table or csv");
      if (format != "table" && format != "csv")
        cl.Fail("unknown format '" + format + "' (table or csv)");
    } else if (cl.IsOption() && input.empty()) {
      cl.Unknown();
    } else if (input.empty()) {
      input = a;
    } else if (!has_query) {
      query = a;  // a query may well start with '-' (a comment)
      has_query = true;
    } else {
      cl.Fail("one query at a time (got a third argument '" + a + "')");
    }
  }
  if (input.empty()) cl.Fail("no trace given");
  if (!has_query) cl.Fail("no query given");
  Result<AnalysisRows> rows = Error{""};
  if (IsSqliteFile(input)) {
    rows = QueryDatabaseFile(input, query);
  } else {
    auto trace = LoadTrace(input);
    if (!trace.ok()) return CommandFailed("sql", trace.error().message);
    rows = QueryTrace(*trace.value(), query);
  }
  if (!rows.ok()) return CommandFailed("sql", rows.error().message);
  std::string text = format == "csv" ? rows.value().FormatCsv() : rows.value().FormatTable();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int RunExportCommand(int argc, char** argv) {
  CommandLine cl("profsh export", argc, argv, {"--sqlite", "--help"});
  std::string input, output;
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kExportUsage, stdout);
      return 0;
    }
    if (a == "--sqlite") {
      output = cl.Value("an output file");
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else if (input.empty()) {
      input = a;
    } else {
      cl.Fail("one trace at a time (got " + input + " and " + a + ")");
    }
  }
  if (output.empty()) cl.Fail("no format given (--sqlite OUT)");
  if (input.empty()) cl.Fail("no trace given");
  auto trace = LoadTrace(input);
  if (!trace.ok()) return CommandFailed("export", trace.error().message);
  Status s = ExportTrace(*trace.value(), "sqlite", output);
  if (!s.ok()) return CommandFailed("export", output + ": " + s.message());
  return 0;
}

}  // namespace profsh::repl
