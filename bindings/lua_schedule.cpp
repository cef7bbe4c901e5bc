// profsh.schedule{...}: torch.profiler.schedule as a callable Lua object, and
// profsh.tensorboard_trace_handler(dir, worker_name): an on_trace_ready handler that writes
// {worker}.{time_ns}.pt.trace.json as torch's does.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "bindings/lua_api.h"
#include "bindings/lua_schedule.h"
#include "bindings/lua_support.h"
#include "engine/exporters/exporter.h"

namespace profsh::lua {

namespace {

const char* const kScheduleType = "profsh.Schedule";

int NewSchedule(lua_State* L) {
  return Protect(L, [&] {
    Options opts(L, 1, "schedule",
                 {"skip_first", "wait", "warmup", "active", "repeat", "skip_first_wait"});
    Schedule s;
    s.skip_first = opts.Int("skip_first", 0);
    s.wait = opts.Int("wait", 0);
    s.warmup = opts.Int("warmup", 0);
    s.active = opts.Int("active", 1);
    s.repeat = opts.Int("repeat", 0);
    s.skip_first_wait = opts.Int("skip_first_wait", 0);
    if (!s.Valid()) throw LuaError(Schedule::kInvalidMessage);
    if (s.warmup == 0) {
      // torch warns the same way.
      std::fprintf(
          stderr,
          "profsh: warning: Profiler won't be using warmup, this can skew profiler results\n");
    }
    NewUserdata(L, kScheduleType, Schedule(s));
    return 1;
  });
}

int CallSchedule(lua_State* L) {
  return Protect(L, [&] {
    auto* s = CheckUserdata<Schedule>(L, 1, kScheduleType, "schedule");
    if (!lua_isinteger(L, 2))
      throw LuaError("bad argument #1 to 'schedule' (a step number expected, got " +
                     TypeName(L, 2) + ")");
    lua_Integer step = lua_tointeger(L, 2);
    if (step < 0)
      throw LuaError("bad argument #1 to 'schedule' (step must be >= 0, got " +
                     std::to_string(step) + ")");
    lua_pushstring(L, ActionName(s->Action(step)));
    return 1;
  });
}

int ScheduleField(lua_State* L) {
  auto* s = static_cast<Schedule*>(lua_touserdata(L, 1));
  std::string key = lua_tostring(L, 2) ? lua_tostring(L, 2) : "";
  const int64_t* v = s->Field(key);
  if (v == nullptr) return 0;
  lua_pushinteger(L, *v);
  return 1;
}

int ScheduleToString(lua_State* L) {
  auto* s = static_cast<Schedule*>(lua_touserdata(L, 1));
  std::string text =
      "<profsh.Schedule skip_first=" + std::to_string(s->skip_first) +
      ", wait=" + std::to_string(s->wait) + ", warmup=" + std::to_string(s->warmup) +
      ", active=" + std::to_string(s->active) + ", repeat=" + std::to_string(s->repeat) +
      (s->skip_first_wait ? ", skip_first_wait=" + std::to_string(s->skip_first_wait) : "") + ">";
  lua_pushstring(L, text.c_str());
  return 1;
}

// mkdir -p
bool MakeDirectories(const std::string& path, std::string* error) {
  std::string partial;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    partial = path.substr(0, slash);
    if (!partial.empty() && mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) {
      *error = partial + ": " + std::strerror(errno);
      return false;
    }
    pos = slash + 1;
  }
  return true;
}

// The handler: upvalues are the folder, the worker name and whether to gzip.
int WriteTensorboardTrace(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = TestTrace(L, 1);
    if (h == nullptr)
      throw LuaError("bad argument #1 to the trace handler (profsh.Trace expected, got " +
                     TypeName(L, 1) + ")");
    std::string dir = lua_tostring(L, lua_upvalueindex(1));
    std::string worker = lua_tostring(L, lua_upvalueindex(2));
    bool gzip = lua_toboolean(L, lua_upvalueindex(3));
    std::string error;
    if (!MakeDirectories(dir, &error))
      throw LuaError("tensorboard_trace_handler: cannot create " + error);
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    std::string path = dir + "/" + worker + "." + std::to_string(ns.count()) + ".pt.trace.json" +
                       (gzip ? ".gz" : "");
    Status s = ExportTrace(*h->trace, "chrome", path);
    if (!s.ok()) throw LuaError(s.message());
    lua_pushstring(L, path.c_str());
    return 1;
  });
}

int TensorboardTraceHandler(lua_State* L) {
  return Protect(L, [&] {
    std::string dir(CheckString(L, 1, "tensorboard_trace_handler", "folder"));
    auto worker = OptString(L, 2, "tensorboard_trace_handler", "worker name");
    bool gzip = lua_toboolean(L, 3);
    std::string name;
    if (worker) {
      name = *worker;
    } else {
      char host[256] = "localhost";
      gethostname(host, sizeof host - 1);
      name = std::string(host) + "_" + std::to_string(getpid());
    }
    lua_pushstring(L, dir.c_str());
    lua_pushstring(L, name.c_str());
    lua_pushboolean(L, gzip);
    lua_pushcclosure(L, WriteTensorboardTrace, 3);
    return 1;
  });
}

}  // namespace

Schedule* TestSchedule(lua_State* L, int index) {
  return static_cast<Schedule*>(luaL_testudata(L, index, kScheduleType));
}

void RegisterSchedule(lua_State* L) {
  luaL_newmetatable(L, kScheduleType);
  lua_pushcfunction(L, CallSchedule);
  lua_setfield(L, -2, "__call");
  lua_pushcfunction(L, ScheduleField);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ScheduleToString);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  lua_pushcfunction(L, NewSchedule);
  lua_setfield(L, -2, "schedule");
  lua_pushcfunction(L, TensorboardTraceHandler);
  lua_setfield(L, -2, "tensorboard_trace_handler");
}

}  // namespace profsh::lua
