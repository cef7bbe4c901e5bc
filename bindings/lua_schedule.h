// Schedules in Lua (profsh.schedule) and the TensorBoard trace handler.
#pragma once

extern "C" {
#include <lua.h>
}

#include "engine/stream/schedule.h"

namespace profsh::lua {

void RegisterSchedule(lua_State* L);  // expects the profsh table on top of the stack
// The schedule at `index`, or nullptr when it is not a profsh.Schedule.
Schedule* TestSchedule(lua_State* L, int index);

}  // namespace profsh::lua
