// Perfetto's standard-library modules that profsh provides, as views in every trace's database,
// and the `INCLUDE PERFETTO MODULE x;` statements Perfetto users start their queries with.
#pragma once

#include <string>

#include "engine/exporters/sqlite_handle.h"

namespace profsh::sqlite {

// Creates the views of every provided module (slices.with_context: thread_slice,
// process_slice, thread_or_process_slice).
Status CreateModuleViews(const Database& db);

// The query with its leading INCLUDE PERFETTO MODULE statements taken off; an error naming a
// module profsh does not provide, with the list of those it does.
Result<std::string> TakeModuleIncludes(const std::string& sql);

}  // namespace profsh::sqlite
