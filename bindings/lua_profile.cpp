// profsh.profile{activities={"nvtx","itt"}, ...}: the profiler object. p:run{"bash", "launch.sh"}
// (or p:run("shell command")) runs a workload under the collector; afterwards the object
// answers everything a Trace does (p:key_averages(), p:export_chrome_trace(...), p.duration),
// as torch's profile object does after its `with` block.
#include <algorithm>
#include <string>
#include <vector>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/collector/recording.h"

namespace profsh::lua {

namespace {

const char* const kProfileType = "profsh.Profile";
const char* const kTraceType = "profsh.Trace";

struct ProfileHandle {
  LaunchOptions options;
  bool keep_session = false;
  bool ran = false;
  LaunchResult launch;
  SessionSummary summary;
  bool session_kept = false;
};

ProfileHandle* CheckProfile(lua_State* L, int index, const char* function) {
  return CheckUserdata<ProfileHandle>(L, index, kProfileType, function);
}

std::vector<std::string> ReadActivities(lua_State* L, const Options& opts) {
  opts.Push("activities");
  std::vector<std::string> out;
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return KnownActivities();
  }
  if (lua_type(L, -1) == LUA_TSTRING) {
    out.push_back(lua_tostring(L, -1));
  } else if (lua_istable(L, -1)) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 2);
        throw LuaError("bad option 'activities' to 'profile' (a list of names expected, item " +
                       std::to_string(i) + " is " + TypeName(L, -1) + ")");
      }
      out.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  } else {
    std::string got = TypeName(L, -1);
    lua_pop(L, 1);
    throw LuaError("bad option 'activities' to 'profile' (a list of names expected, got " + got +
                   ")");
  }
  lua_pop(L, 1);
  const auto& known = KnownActivities();
  for (const std::string& a : out) {
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      throw LuaError("unknown activity '" + a + "' in 'profile' (activities: nvtx, itt)");
    }
  }
  return out;
}

int Profile(lua_State* L) {
  return Protect(L, [&] {
    Options opts(L, 1, "profile", {"activities", "buffer_kb", "drain_ms", "keep_session"});
    ProfileHandle h;
    h.options.activities = ReadActivities(L, opts);
    int64_t buffer = opts.Int("buffer_kb", 0), drain = opts.Int("drain_ms", 0);
    if (buffer < 0 || buffer > (1 << 20))
      throw LuaError("bad option 'buffer_kb' to 'profile' (0..1048576 expected)");
    if (drain < 0 || drain > 100)
      throw LuaError("bad option 'drain_ms' to 'profile' (0..100 expected)");
    h.options.buffer_kb = static_cast<uint32_t>(buffer);
    h.options.drain_ms = static_cast<uint32_t>(drain);
    h.keep_session = opts.Bool("keep_session", false);
    void* mem = lua_newuserdatauv(L, sizeof(ProfileHandle), 1);
    new (mem) ProfileHandle(std::move(h));
    luaL_setmetatable(L, kProfileType);
    return 1;
  });
}

int Run(lua_State* L) {
  return Protect(L, [&] {
    ProfileHandle* h = CheckProfile(L, 1, "run");
    std::vector<std::string> argv;
    if (lua_type(L, 2) == LUA_TSTRING) {
      argv = {"/bin/sh", "-c", lua_tostring(L, 2)};
    } else if (lua_istable(L, 2)) {
      lua_Integer n = luaL_len(L, 2);
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, 2, i);
        if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
          std::string got = TypeName(L, -1);
          lua_pop(L, 1);
          throw LuaError("bad argument #1 to 'run' (command item " + std::to_string(i) + " is " +
                         got + ")");
        }
        argv.push_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      if (argv.empty()) throw LuaError("bad argument #1 to 'run' (the command list is empty)");
    } else {
      throw LuaError(
          "bad argument #1 to 'run' (a command list such as {\"bash\", \"launch.sh\"} or a shell "
          "string expected, got " +
          TypeName(L, 2) + ")");
    }
    LaunchOptions options = h->options;
    options.argv = std::move(argv);
    auto recorded = RecordWorkload(options, h->keep_session);
    if (!recorded.ok()) throw LuaError(recorded.error().message);
    Recording& r = recorded.value();
    h->ran = true;
    h->launch = r.launch;
    h->summary = r.session.summary;
    h->session_kept = r.session_kept;
    PushTrace(L, std::shared_ptr<Trace>(std::move(r.session.trace)));
    lua_setiuservalue(L, 1, 1);
    lua_pushinteger(L, h->launch.exit_code);
    return 1;
  });
}

void PushSummary(lua_State* L, const SessionSummary& s) {
  lua_createtable(L, 0, 16);
  auto field = [&](const char* name, uint64_t v) {
    lua_pushinteger(L, static_cast<lua_Integer>(v));
    lua_setfield(L, -2, name);
  };
  field("processes", s.processes);
  field("threads", s.threads);
  field("ranges", s.ranges);
  field("marks", s.marks);
  field("counter_values", s.counter_values);
  field("dropped_ranges", s.dropped_ranges);
  field("dropped_events", s.dropped_events);
  field("events_without_thread_slot", s.events_without_slot);
  field("strings_refused", s.strings_refused);
  field("pops_without_push", s.unmatched_pops);
  field("ends_of_unknown_ranges", s.unknown_range_ends);
  field("ranges_open_at_thread_exit", s.open_at_thread_exit);
  field("ranges_open_at_end", s.open_at_end);
  field("streams_cut_short", s.cut_streams);
  field("stream_bytes", s.stream_bytes);
  lua_pushstring(L, DescribeRecording(s).c_str());
  lua_setfield(L, -2, "text");
}

// Trace methods called on the profile: the trace takes the place of `self`.
int ForwardToTrace(lua_State* L) {
  ProfileHandle* h = static_cast<ProfileHandle*>(luaL_testudata(L, 1, kProfileType));
  const char* method = lua_tostring(L, lua_upvalueindex(1));
  if (h == nullptr) {
    return luaL_error(L, "bad argument #1 to '%s' (profsh.Profile expected; call it as p:%s(...))",
                      method, method);
  }
  if (!h->ran)
    return luaL_error(L, "the profile has not run yet: call p:run{...} before p:%s()", method);
  lua_getiuservalue(L, 1, 1);
  lua_replace(L, 1);
  luaL_getmetatable(L, kTraceType);
  lua_getfield(L, -1, "__methods");
  lua_getfield(L, -1, method);
  lua_insert(L, 1);
  lua_pop(L, 2);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

int ProfileIndex(lua_State* L) {
  ProfileHandle* h = static_cast<ProfileHandle*>(lua_touserdata(L, 1));
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  std::string key = lua_tostring(L, 2);
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "__methods");
  if (lua_getfield(L, -1, key.c_str()) != LUA_TNIL) return 1;
  lua_pop(L, 3);
  if (key == "exit_code") {
    if (!h->ran) return 0;
    lua_pushinteger(L, h->launch.exit_code);
    return 1;
  }
  if (key == "signal") {
    if (!h->ran || h->launch.term_signal == 0) return 0;
    lua_pushinteger(L, h->launch.term_signal);
    return 1;
  }
  if (key == "session") {
    if (!h->session_kept) return 0;
    lua_pushstring(L, h->launch.session.c_str());
    return 1;
  }
  if (key == "summary") {
    if (!h->ran) return 0;
    PushSummary(L, h->summary);
    return 1;
  }
  if (key == "activities") {
    lua_createtable(L, static_cast<int>(h->options.activities.size()), 0);
    for (size_t i = 0; i < h->options.activities.size(); ++i) {
      lua_pushstring(L, h->options.activities[i].c_str());
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  }
  if (key == "trace") {
    if (!h->ran) return 0;
    lua_getiuservalue(L, 1, 1);
    return 1;
  }
  if (!h->ran) return 0;
  // A trace field (duration, warnings, ...).
  lua_getiuservalue(L, 1, 1);
  lua_getfield(L, -1, key.c_str());
  return 1;
}

int ProfileToString(lua_State* L) {
  ProfileHandle* h = static_cast<ProfileHandle*>(lua_touserdata(L, 1));
  std::string activities;
  for (const auto& a : h->options.activities) activities += (activities.empty() ? "" : ",") + a;
  std::string s = "<profsh.Profile " + activities + ": ";
  if (!h->ran) {
    s += "not run yet>";
  } else {
    s += "exit status " + std::to_string(h->launch.exit_code) + ", " +
         DescribeRecording(h->summary) + ">";
  }
  lua_pushstring(L, s.c_str());
  return 1;
}

const char* const kForwarded[] = {
    "key_averages", "export_chrome_trace", "export_stacks",    "save", "events", "processes",
    "threads",      "flamegraph",          "export_speedscope"};

}  // namespace

void RegisterProfile(lua_State* L) {
  luaL_newmetatable(L, kProfileType);
  lua_pushcfunction(L, GcUserdata<ProfileHandle>);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, ProfileToString);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, ProfileIndex);
  lua_setfield(L, -2, "__index");
  lua_newtable(L);
  lua_pushcfunction(L, Run);
  lua_setfield(L, -2, "run");
  for (const char* m : kForwarded) {
    lua_pushstring(L, m);
    lua_pushcclosure(L, ForwardToTrace, 1);
    lua_setfield(L, -2, m);
  }
  lua_setfield(L, -2, "__methods");
  lua_newtable(L);
  const char* fields[] = {"exit_code", "signal",   "session",  "summary", "activities",
                          "trace",     "duration", "warnings", "metadata"};
  int i = 1;
  for (const char* f : fields) {
    lua_pushstring(L, f);
    lua_rawseti(L, -2, i++);
  }
  lua_setfield(L, -2, "__fields");
  lua_pop(L, 1);
  lua_pushcfunction(L, Profile);
  lua_setfield(L, -2, "profile");
}

}  // namespace profsh::lua
