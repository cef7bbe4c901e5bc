// trace:launcher(kernel) and trace:kernels(op): what profsh links for the CUDA columns of the
// tables (device work to the CPU op that launched it, through External id or the runtime call's
// correlation, whichever convention the trace's Kineto used), asked from Lua.
#include <unordered_map>
#include <vector>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"

namespace profsh::lua {

// Trace event indices: device work -> (op, runtime call), op -> its device work.
struct LaunchIndex {
  struct Launcher {
    int64_t op = -1;
    int64_t runtime = -1;
  };
  std::unordered_map<uint32_t, Launcher> launcher_of;
  std::unordered_map<uint32_t, std::vector<uint32_t>> work_of;
};

namespace {

const char* const kTraceType = "profsh.Trace";

const LaunchIndex& Launches(TraceHandle* h) {
  if (h->launches) return *h->launches;
  auto index = std::make_shared<LaunchIndex>();
  const FunctionEvents& f = *h->Events();
  auto event_of = [&](int32_t c) -> int64_t {
    if (c < 0) return -1;
    auto e = f.trace_event(static_cast<size_t>(c));
    return e ? static_cast<int64_t>(*e) : -1;
  };
  for (const FunctionEvents::Launch& l : f.launches) {
    auto device = f.trace_event(l.device);
    if (!device) continue;
    const int64_t op = event_of(l.op), runtime = event_of(l.runtime);
    index->launcher_of[*device] = {op, runtime};
    if (op >= 0) index->work_of[static_cast<uint32_t>(op)].push_back(*device);
  }
  h->launches = index;
  return *index;
}

// An event argument: an event table from t:events{} (its `index`) or the index itself.
uint32_t EventIndexArg(lua_State* L, int arg, const Trace& t, const char* function) {
  lua_Integer index = 0;
  if (lua_type(L, arg) == LUA_TTABLE) {
    lua_getfield(L, arg, "index");
    int isnum = 0;
    index = lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum) {
      throw LuaError(std::string("bad argument #1 to '") + function +
                     "' (an event from t:events{} expected: the table has no 'index')");
    }
  } else if (lua_type(L, arg) == LUA_TNUMBER) {
    index = lua_tointeger(L, arg);
  } else {
    throw LuaError(std::string("bad argument #1 to '") + function +
                   "' (an event from t:events{} or its index expected, got " + TypeName(L, arg) +
                   ")");
  }
  if (index < 1 || static_cast<size_t>(index) > t.events.size()) {
    throw LuaError(std::string("bad argument #1 to '") + function + "' (event index " +
                   std::to_string(index) + " is not in 1.." + std::to_string(t.events.size()) +
                   ")");
  }
  return static_cast<uint32_t>(index - 1);
}

}  // namespace

int TraceLauncher(lua_State* L) {
  return Protect(L, [&] {
    auto* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "launcher");
    const uint32_t event = EventIndexArg(L, 2, *h->trace, "launcher");
    const LaunchIndex& index = Launches(h);
    auto it = index.launcher_of.find(event);
    if (it == index.launcher_of.end()) {
      lua_pushnil(L);
      lua_pushnil(L);
      return 2;
    }
    for (int64_t e : {it->second.op, it->second.runtime}) {
      if (e >= 0) {
        PushEvent(L, *h->trace, static_cast<size_t>(e));
      } else {
        lua_pushnil(L);
      }
    }
    return 2;
  });
}

int TraceKernels(lua_State* L) {
  return Protect(L, [&] {
    auto* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "kernels");
    const uint32_t event = EventIndexArg(L, 2, *h->trace, "kernels");
    const LaunchIndex& index = Launches(h);
    lua_newtable(L);
    auto it = index.work_of.find(event);
    if (it == index.work_of.end()) return 1;
    lua_Integer out = 0;
    for (uint32_t e : it->second) {
      PushEvent(L, *h->trace, e);
      lua_rawseti(L, -2, ++out);
    }
    return 1;
  });
}

}  // namespace profsh::lua
