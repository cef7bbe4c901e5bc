// The steps that fill a trace's database, one file per group of tables: Perfetto's
// (sqlite_tables.cpp) and profsh's own (sqlite_profsh_tables.cpp).
#pragma once

#include "engine/exporters/perfetto_layout.h"
#include "engine/exporters/sqlite_handle.h"

namespace profsh::sqlite {

Status WriteKernels(const Trace& t, const PerfettoLayout& layout, const Database& db);
Status WriteMemory(const Trace& t, const PerfettoLayout& layout, const Database& db);
Status WriteOperators(const Trace& t, const Database& db);

}  // namespace profsh::sqlite
