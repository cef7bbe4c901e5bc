// `profsh sql TRACE QUERY [--format table|csv]`: one SQL statement over a trace's tables
// (Perfetto's names, engine/exporters/sqlite_database.h), or over a database `profsh export
// --sqlite` wrote. `profsh export --sqlite OUT TRACE`: that database as a file.
#pragma once

namespace profsh::repl {

int RunSqlCommand(int argc, char** argv);
int RunExportCommand(int argc, char** argv);

}  // namespace profsh::repl
