// The critical path across ranks and its what-if in Lua (lua_critical_path_job.cpp): cp:whatif{},
// cp:contributors(), the WhatIf value they return, and the Chrome export's critical_path option.
#pragma once

#include <vector>

extern "C" {
#include <lua.h>
}

#include "engine/exporters/exporter.h"

namespace profsh::lua {

// cp:whatif{ {kernel = PATTERN | op = PATTERN | sync = PATTERN | rank = N, scale = S,
// remove = true}, ... } on a CriticalPath or a WhatIf.
int CriticalPathWhatIf(lua_State* L);
// cp:contributors([limit]): the path's time per (rank, event name, bound_by), largest first.
int CriticalPathContributors(lua_State* L);
// The arrows of the CriticalPath or WhatIf at `index`, for t:export_chrome_trace{critical_path=}.
std::vector<ChromeFlow> CriticalPathFlowsOf(lua_State* L, int index, const char* function);
// Registers the WhatIf type (expects the profsh table on top of the stack).
void RegisterWhatIf(lua_State* L);

}  // namespace profsh::lua
