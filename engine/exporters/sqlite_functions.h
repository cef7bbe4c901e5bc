// Perfetto's SQL functions over a trace's database: extract_arg(arg_set_id, key) and the table
// functions ancestor_slice, descendant_slice, directly_connected_flow, following_flow and
// preceding_flow (SQLite eponymous virtual tables whose hidden column is the argument). They
// read the database's own tables, so they work on a file `export --sqlite` wrote as well.
#pragma once

#include <sqlite3.h>

#include "engine/util/result.h"

namespace profsh::sqlite {

Status RegisterPerfettoFunctions(sqlite3* db);

// Whether this thread is declaring a table function's columns to SQLite (which SQLite parses as
// a CREATE TABLE: an authorizer that keeps the trace's tables read-only lets it through).
bool DeclaringTableFunction();

}  // namespace profsh::sqlite
