// profsh.profile{activities={"nvtx","itt"}, ...}: the profiler object. p:run{"bash", "launch.sh"}
// (or p:run("shell command")) runs a workload under the collector; afterwards the object
// answers everything a Trace does (p:key_averages(), p:export_chrome_trace(...), p.duration),
// as torch's profile object does after its `with` block.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/flight_triggers.h"
#include "bindings/lua_api.h"
#include "bindings/lua_flight.h"
#include "bindings/lua_schedule.h"
#include "bindings/lua_support.h"
#include "engine/decoding/session_summary.h"
#include "engine/io/paths.h"
#include "engine/load/trace_loader.h"
#include "engine/recording/in_process_recorder.h"
#include "engine/session/flight_dumps.h"
#include "engine/session/flight_recorder.h"
#include "engine/session/on_demand.h"
#include "engine/session/recording.h"

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
  uint64_t windows = 0;
  std::vector<std::string> warnings;
  ControlChannel* control = nullptr;  // while p:run() waits
  bool stop_requested = false;
  // Profiling Lua code (p:start(), profsh.record_function, p:step(), p:stop()) rather than a
  // workload.
  bool in_process = false;
  std::optional<InProcessRecorder> recorder;  // set once the options (its schedule) are read
  // flight_recorder = {...}: every step recorded, the steps around a trigger handed over.
  std::optional<FlightRecorderOptions> flight;
  std::string
      trigger_spec;  // trigger = "slow-step" or a Lua expression (a function: kTriggerValue)
  FlightRecorder::Stats flight_stats;
  // watchdog = {seconds = S, kill = false} (or watchdog = S): a hang dumps the ring.
  WatchdogSettings watchdog;
  uint64_t hangs = 0;

  bool started() const { return recorder && recorder->started(); }
};

// User values of a profile userdata.
constexpr int kTraceValue = 1;    // the last trace (a window, or the whole run)
constexpr int kHandlerValue = 2;  // on_trace_ready
constexpr int kTriggerValue = 3;  // trigger, a function

ProfileHandle* CheckProfile(lua_State* L, int index, const char* function) {
  return CheckUserdata<ProfileHandle>(L, index, kProfileType, function);
}

// with_stack: true (or "lines") for each frame at its executing line, "torch" for torch 1.13's
// form.
StackForm ReadStackForm(const Options& opts) {
  lua_State* L = opts.state();
  opts.Push("with_stack");
  const int type = lua_type(L, -1);
  std::string form = type == LUA_TSTRING ? lua_tostring(L, -1) : "";
  const std::string got = TypeName(L, -1);
  const bool on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (type == LUA_TNIL || type == LUA_TBOOLEAN)
    return on ? StackForm::kExecutingLine : StackForm::kNone;
  if (form == "lines") return StackForm::kExecutingLine;
  if (form == "torch") return StackForm::kTorch;
  throw LuaError(
      "bad option 'with_stack' to 'profile' (true, \"lines\" or \"torch\" expected, got " +
      (type == LUA_TSTRING ? "\"" + form + "\"" : got) + ")");
}

// profile_memory = true (the workload's processes: the command, Python and torch ones) or "all".
void ReadProfileMemory(const Options& opts, LaunchOptions* launch) {
  lua_State* L = opts.state();
  opts.Push("profile_memory");
  const int type = lua_type(L, -1);
  const std::string scope = type == LUA_TSTRING ? lua_tostring(L, -1) : "";
  const std::string got = TypeName(L, -1);
  const bool on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (type == LUA_TNIL || type == LUA_TBOOLEAN || scope == "workload" || scope == "all") {
    launch->profile_memory = on;
    launch->profile_memory_all = scope == "all";
    return;
  }
  throw LuaError(
      "bad option 'profile_memory' to 'profile' (true, \"workload\" or \"all\" expected, got " +
      (type == LUA_TSTRING ? "\"" + scope + "\"" : got) + ")");
}

std::vector<std::string> ReadActivities(lua_State* L, const Options& opts) {
  opts.Push("activities");
  std::vector<std::string> out;
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return DefaultActivities();
  }
  if (lua_type(L, -1) == LUA_TSTRING) {
    out.push_back(lua_tostring(L, -1));
  } else if (lua_istable(L, -1)) {
    // Raw: a __len metamethod could raise while `out` is alive.
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
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
      throw LuaError("unknown activity '" + a + "' in 'profile' (activities: " + ActivityList() +
                     ")");
    }
  }
  return out;
}

// flight_recorder = {steps = N | seconds = S, mb = 256, before = 5, after = 2, history = 100}
// and trigger = function(step, history) | "slow-step" | "a Lua expression". Returns the
// trigger's Lua type.
int ReadFlightRecorder(const Options& opts, ProfileHandle* h) {
  lua_State* L = opts.state();
  opts.Push("trigger");
  const int trigger_type = lua_type(L, -1);
  if (trigger_type == LUA_TSTRING) h->trigger_spec = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (trigger_type != LUA_TNIL && trigger_type != LUA_TFUNCTION && trigger_type != LUA_TSTRING) {
    throw LuaError(std::string("bad option 'trigger' to 'profile' (a function or a string "
                               "expected, got ") +
                   lua_typename(L, trigger_type) + ")");
  }
  opts.Push("flight_recorder");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    if (trigger_type != LUA_TNIL)
      throw LuaError("'profile': a trigger needs flight_recorder = {steps = N} (or {seconds = S})");
    return trigger_type;
  }
  if (!lua_istable(L, -1)) {
    std::string got = TypeName(L, -1);
    lua_pop(L, 1);
    throw LuaError(
        "bad option 'flight_recorder' to 'profile' ({steps = N} or {seconds = S} "
        "expected, got " +
        got + ")");
  }
  FlightRecorderOptions f;
  {
    Options fo(L, lua_gettop(L), "profile{flight_recorder}",
               {"steps", "seconds", "mb", "before", "after", "history"});
    f.steps = fo.Int("steps", 0);
    f.seconds = fo.Int("seconds", 0);
    const int64_t mb = fo.Int("mb", static_cast<int64_t>(kDefaultFlightRecorderMb));
    f.before = fo.Int("before", f.before);
    f.after = fo.Int("after", f.after);
    const int64_t history = fo.Int("history", static_cast<int64_t>(f.history));
    lua_pop(L, 1);
    if ((f.steps > 0) == (f.seconds > 0) || f.steps < 0 || f.seconds < 0)
      throw LuaError(
          "bad option 'flight_recorder' to 'profile' (steps = N or seconds = S, "
          "one of them, positive)");
    if (mb < 1 || mb > (1 << 20))
      throw LuaError("bad option 'flight_recorder.mb' to 'profile' (1..1048576 expected)");
    if (f.before < 0 || f.after < 0 || history < 1)
      throw LuaError(
          "bad option 'flight_recorder' to 'profile' (before, after >= 0, history >= 1)");
    f.max_bytes = static_cast<uint64_t>(mb) << 20;
    f.history = static_cast<size_t>(history);
    h->options.ring_total_kb = static_cast<uint64_t>(mb) << 10;
  }
  if (h->options.schedule || !h->options.capture_range.empty())
    throw LuaError(
        "'profile': flight_recorder records every step: not with a schedule or "
        "capture_range");
  h->options.schedule = Schedule{};  // every step a window of its own
  h->flight = f;
  if (!h->trigger_spec.empty() && !IsBuiltInTrigger(h->trigger_spec)) {
    auto checked = MakeExpressionTrigger(h->trigger_spec);  // compiled now, to fail early
    if (!checked.ok()) throw LuaError(checked.error().message);
  } else if (!h->trigger_spec.empty()) {
    auto checked = MakeBuiltInTrigger(h->trigger_spec);
    if (!checked.ok()) throw LuaError(checked.error().message);
  }
  return trigger_type;
}

// watchdog = SECONDS | {seconds = S, kill = false}: as profsh run --watchdog (--watchdog-kill).
void ReadWatchdog(const Options& opts, ProfileHandle* h) {
  lua_State* L = opts.state();
  opts.Push("watchdog");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) == LUA_TNUMBER) {
    h->watchdog.seconds = lua_tonumber(L, -1);
    lua_pop(L, 1);
  } else if (lua_istable(L, -1)) {
    Options wo(L, lua_gettop(L), "profile{watchdog}", {"seconds", "kill"});
    h->watchdog.seconds = wo.Number("seconds").value_or(0);
    h->watchdog.kill = wo.Bool("kill", false);
    lua_pop(L, 1);
  } else {
    std::string got = TypeName(L, -1);
    lua_pop(L, 1);
    throw LuaError(
        "bad option 'watchdog' to 'profile' (seconds or {seconds = S, kill = false} "
        "expected, got " +
        got + ")");
  }
  if (!(h->watchdog.seconds > 0 && h->watchdog.seconds <= 86400))
    throw LuaError("bad option 'watchdog' to 'profile' (seconds above 0, at most 86400, expected)");
  if (!h->flight)
    throw LuaError(
        "'profile': a watchdog needs flight_recorder = {steps = N} (the steps kept to dump on "
        "a hang)");
}

int Profile(lua_State* L) {
  return Protect(L, [&] {
    Options opts(L, 1, "profile",
                 {"activities",    "buffer_kb",          "drain_ms",     "keep_session",
                  "schedule",      "on_trace_ready",     "step_marker",  "capture_range",
                  "record_shapes", "with_stack",         "with_flops",   "profile_memory",
                  "sample_rate",   "sample_stack_bytes", "sample_event", "cupti",
                  "gpu_wait_ms",   "flight_recorder",    "trigger",      "watchdog"});
    ProfileHandle h;
    h.options.activities = ReadActivities(L, opts);
    int64_t buffer = opts.Int("buffer_kb", 0), drain = opts.Int("drain_ms", 0);
    if (buffer < 0 || buffer > kMaxBufferKb)
      throw LuaError("bad option 'buffer_kb' to 'profile' (0.." + std::to_string(kMaxBufferKb) +
                     " expected)");
    if (drain < 0 || drain > kMaxDrainMs)
      throw LuaError("bad option 'drain_ms' to 'profile' (0.." + std::to_string(kMaxDrainMs) +
                     " expected)");
    h.options.buffer_kb = static_cast<uint32_t>(buffer);
    h.options.drain_ms = static_cast<uint32_t>(drain);
    h.keep_session = opts.Bool("keep_session", false);
    h.options.record_shapes = opts.Bool("record_shapes", false);
    h.options.with_stack = ReadStackForm(opts);
    h.options.with_flops = opts.Bool("with_flops", false);
    ReadProfileMemory(opts, &h.options);
    const int64_t rate = opts.Int("sample_rate", 999);
    if (rate < 1 || rate > 100000)
      throw LuaError("bad option 'sample_rate' to 'profile' (1..100000 Hz expected)");
    h.options.sample_rate = static_cast<uint32_t>(rate);
    const int64_t stack_bytes = opts.Int("sample_stack_bytes", 8192);
    if (stack_bytes < 8 || stack_bytes > 65528 || stack_bytes % 8 != 0)
      throw LuaError(
          "bad option 'sample_stack_bytes' to 'profile' (a multiple of 8 up to 65528 expected)");
    h.options.sample_stack_bytes = static_cast<uint32_t>(stack_bytes);
    const std::string event = opts.String("sample_event").value_or("auto");
    if (!ParseSampleEvent(event, &h.options.sample_event))
      throw LuaError(
          "bad option 'sample_event' to 'profile' ('auto', 'cycles' or 'cpu-clock' "
          "expected, got '" +
          event + "')");
    h.options.cupti = opts.String("cupti").value_or("");
    const int64_t gpu_wait = opts.Int("gpu_wait_ms", h.options.gpu_wait_ms);
    if (gpu_wait < 1 || gpu_wait > kMaxGpuWaitMs)
      throw LuaError("bad option 'gpu_wait_ms' to 'profile' (1.." + std::to_string(kMaxGpuWaitMs) +
                     " expected)");
    h.options.gpu_wait_ms = static_cast<uint32_t>(gpu_wait);
    opts.Push("schedule");
    if (!lua_isnil(L, -1)) {
      Schedule* sched = TestSchedule(L, -1);
      if (sched == nullptr) {
        std::string got = TypeName(L, -1);
        lua_pop(L, 1);
        throw LuaError("bad option 'schedule' to 'profile' (a profsh.schedule{...} expected, got " +
                       got + ")");
      }
      h.options.schedule = *sched;
    }
    lua_pop(L, 1);
    if (auto m = opts.String("step_marker")) {
      Status st = CheckStepMarker(*m);
      if (!st.ok()) throw LuaError("bad option 'step_marker' to 'profile' (" + st.message() + ")");
      h.options.step_marker = *m;
    }
    if (auto c = opts.String("capture_range")) {
      if (c->empty())
        throw LuaError("bad option 'capture_range' to 'profile' (a range name expected)");
      h.options.capture_range = *c;
    }
    if (h.options.schedule && !h.options.capture_range.empty()) {
      throw LuaError("'profile' takes a schedule or a capture_range, not both");
    }
    opts.Push("on_trace_ready");
    int handler_type = lua_type(L, -1);
    lua_pop(L, 1);
    if (handler_type != LUA_TNIL && handler_type != LUA_TFUNCTION) {
      throw LuaError(
          std::string("bad option 'on_trace_ready' to 'profile' (a function expected, got ") +
          lua_typename(L, handler_type) + ")");
    }
    const int trigger_type = ReadFlightRecorder(opts, &h);
    ReadWatchdog(opts, &h);
    h.recorder.emplace(h.options.schedule);
    void* mem = lua_newuserdatauv(L, sizeof(ProfileHandle), 3);
    new (mem) ProfileHandle(std::move(h));
    luaL_setmetatable(L, kProfileType);
    if (handler_type == LUA_TFUNCTION) {
      opts.Push("on_trace_ready");
      lua_setiuservalue(L, -2, kHandlerValue);
    }
    if (trigger_type == LUA_TFUNCTION) {
      opts.Push("trigger");
      lua_setiuservalue(L, -2, kTriggerValue);
    }
    return 1;
  });
}

// Calls on_trace_ready(trace) for the profile at `profile` (a stack index) with the trace on top
// of the stack (popped), and keeps the trace as the profile's latest. Returns the handler's
// error message, or "" when it succeeded (or there is none).
std::string HandTrace(lua_State* L, int profile) {
  profile = lua_absindex(L, profile);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, profile, kTraceValue);
  if (lua_getiuservalue(L, profile, kHandlerValue) != LUA_TFUNCTION) {
    lua_pop(L, 2);
    return "";
  }
  lua_insert(L, -2);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    std::string message =
        lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)";
    lua_pop(L, 1);
    return message;
  }
  return "";
}

std::vector<std::string> ReadCommand(lua_State* L, int index) {
  std::vector<std::string> argv;
  if (lua_type(L, index) == LUA_TSTRING) return {"/bin/sh", "-c", lua_tostring(L, index)};
  if (!lua_istable(L, index)) {
    throw LuaError(
        "bad argument #1 to 'run' (a command list such as {\"bash\", \"launch.sh\"} or a shell "
        "string expected, got " +
        TypeName(L, index) + ")");
  }
  // Raw: a __len metamethod could raise while `argv` is alive.
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
      std::string got = TypeName(L, -1);
      lua_pop(L, 1);
      throw LuaError("bad argument #1 to 'run' (command item " + std::to_string(i) + " is " + got +
                     ")");
    }
    argv.push_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  if (argv.empty()) throw LuaError("bad argument #1 to 'run' (the command list is empty)");
  return argv;
}

// p:run() with flight_recorder: each step goes to the recorder, each dump to on_trace_ready.
int RunFlight(lua_State* L, ProfileHandle* h, const LaunchOptions& options) {
  FlightRecorder recorder(*h->flight);
  if (lua_getiuservalue(L, 1, kTriggerValue) == LUA_TFUNCTION) {
    recorder.AddTrigger(MakeFunctionTrigger(L, luaL_ref(L, LUA_REGISTRYINDEX), "trigger"));
  } else {
    lua_pop(L, 1);
    if (!h->trigger_spec.empty()) {
      auto t = IsBuiltInTrigger(h->trigger_spec) ? MakeBuiltInTrigger(h->trigger_spec)
                                                 : MakeExpressionTrigger(h->trigger_spec);
      if (!t.ok()) throw LuaError(t.error().message);
      recorder.AddTrigger(std::move(t.value()));
    }
  }
  std::string handler_error;
  h->windows = 0;
  h->warnings.clear();
  auto hand = [&](std::vector<FlightDump> dumps) {
    for (FlightDump& d : dumps) {
      ++h->windows;
      if (!handler_error.empty()) continue;
      PushTrace(L, std::shared_ptr<Trace>(std::move(d.window.trace)));
      std::string error = HandTrace(L, 1);
      if (!error.empty()) handler_error = error;
    }
    for (std::string& n : recorder.TakeNotices()) {
      std::fprintf(stderr, "profsh: flight recorder: %s\n", n.c_str());
      h->warnings.push_back("flight recorder: " + n);
    }
  };
  // Dumps on a hang (watchdog), on demand, on SIGUSR2, and the other processes' share of a
  // trigger's span, each handed to on_trace_ready as a trigger's dump is; what a client that
  // asked for a dump is told in place of the paths profsh run gives.
  FlightDumps other_dumps(recorder, h->watchdog, [&](std::vector<FlightDump> dumps) {
    std::vector<std::string> told;
    for (const FlightDump& d : dumps) {
      told.push_back("dump " + std::to_string(d.window.info.index) + " of pid " +
                     std::to_string(d.window.info.pid) + ", handed to on_trace_ready");
    }
    hand(std::move(dumps));
    return told;
  });
  LiveCallbacks callbacks;
  callbacks.started = [&](const std::string& session) { other_dumps.Started(session); };
  callbacks.inspect = [&](LiveSession& live, ControlChannel& control) {
    other_dumps.Inspect(live, control);
  };
  callbacks.window = [&](WindowTrace w, ControlChannel& control) {
    h->control = &control;
    h->ran = true;
    const uint64_t dropped = w.dropped_so_far;
    std::vector<FlightDump> made = recorder.AddStep(std::move(w), dropped);
    other_dumps.AlsoDumpOthers(made);
    hand(std::move(made));
    lua_gc(L, LUA_GCCOLLECT);
    if (!handler_error.empty() || h->stop_requested) control.Stop();
  };
  auto recorded = RecordWorkloadLive(options, h->keep_session, callbacks);
  other_dumps.Close();
  h->hangs = other_dumps.hangs();
  h->control = nullptr;
  if (!recorded.ok()) throw LuaError(recorded.error().message);
  hand(recorder.Finish());
  LiveRecording& r = recorded.value();
  h->ran = true;
  h->launch = r.launch;
  h->summary = r.summary;
  h->warnings.insert(h->warnings.end(), r.warnings.begin(), r.warnings.end());
  h->session_kept = h->keep_session;
  h->flight_stats = recorder.stats();
  if (!handler_error.empty()) throw LuaError("on_trace_ready failed: " + handler_error);
  lua_pushinteger(L, h->launch.exit_code);
  return 1;
}

int Run(lua_State* L) {
  return Protect(L, [&] {
    ProfileHandle* h = CheckProfile(L, 1, "run");
    if (h->started())
      throw LuaError("the profile is recording in-process (p:start()); p:stop() it before p:run()");
    LaunchOptions options = h->options;
    options.argv = ReadCommand(L, 2);
    lua_getiuservalue(L, 1, kHandlerValue);
    const bool has_handler = lua_isfunction(L, -1);
    lua_pop(L, 1);
    h->stop_requested = false;
    if (h->flight) return RunFlight(L, h, options);
    if (!has_handler && !options.schedule && options.capture_range.empty()) {
      auto recorded = RecordWorkload(options, h->keep_session);
      if (!recorded.ok()) throw LuaError(recorded.error().message);
      Recording& r = recorded.value();
      h->ran = true;
      h->launch = r.launch;
      h->summary = r.session.summary;
      h->session_kept = r.session_kept;
      h->windows = 1;
      PushTrace(L, std::shared_ptr<Trace>(std::move(r.session.trace)));
      lua_setiuservalue(L, 1, kTraceValue);
      lua_pushinteger(L, h->launch.exit_code);
      return 1;
    }
    // Windows are handed to on_trace_ready while the workload runs; the profile keeps the last.
    std::string handler_error;
    LiveCallbacks callbacks;
    callbacks.window = [&](WindowTrace w, ControlChannel& control) {
      h->control = &control;
      h->ran = true;
      if (h->stop_requested) return;
      PushTrace(L, std::shared_ptr<Trace>(std::move(w.trace)));
      std::string error = HandTrace(L, 1);
      // Lua does not see the C++ memory behind a trace: collect now, so that the windows the
      // handler let go are freed at once and a long job stays flat.
      lua_gc(L, LUA_GCCOLLECT);
      if (!error.empty() && handler_error.empty()) {
        // A failing handler stops the profiler; the error is raised once the workload ends.
        handler_error = error;
        h->stop_requested = true;
      }
      if (h->stop_requested) control.Stop();
    };
    auto recorded = RecordWorkloadLive(options, h->keep_session, callbacks);
    h->control = nullptr;
    if (!recorded.ok()) throw LuaError(recorded.error().message);
    LiveRecording& r = recorded.value();
    h->ran = true;
    h->launch = r.launch;
    h->summary = r.summary;
    h->windows = r.windows;
    h->warnings = r.warnings;
    h->session_kept = h->keep_session;
    if (!handler_error.empty()) throw LuaError("on_trace_ready failed: " + handler_error);
    lua_pushinteger(L, h->launch.exit_code);
    return 1;
  });
}

// --- in-process profiling ---

const char* const kCurrentProfile = "profsh.current_profile";

// A window the recorder finished goes to on_trace_ready and becomes the profile's trace.
void HandWindow(lua_State* L, int profile, ProfileHandle* h, std::unique_ptr<Trace> window) {
  if (!window) return;
  ++h->windows;
  PushTrace(L, std::move(window));
  std::string error = HandTrace(L, profile);
  if (!error.empty()) throw LuaError("on_trace_ready failed: " + error);
}

int Start(lua_State* L) {
  return Protect(L, [&] {
    ProfileHandle* h = CheckProfile(L, 1, "start");
    if (h->started()) throw LuaError("the profile is already started");
    h->in_process = true;
    h->ran = true;
    h->recorder->Start();
    lua_pushvalue(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, kCurrentProfile);
    lua_pushvalue(L, 1);
    return 1;
  });
}

// torch's profile.step().
int Step(lua_State* L) {
  return Protect(L, [&] {
    ProfileHandle* h = CheckProfile(L, 1, "step");
    if (!h->started())
      throw LuaError(
          "p:step() needs a started profile (p:start()); a workload's steps come from its markers");
    HandWindow(L, 1, h, h->recorder->Step());
    return 0;
  });
}

int Stop(lua_State* L) {
  return Protect(L, [&] {
    ProfileHandle* h = CheckProfile(L, 1, "stop");
    if (h->control != nullptr) {  // inside p:run(): stop recording in the workload
      h->stop_requested = true;
      h->control->Stop();
      return 0;
    }
    if (!h->started()) return 0;
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, kCurrentProfile);
    HandWindow(L, 1, h, h->recorder->Stop());
    return 0;
  });
}

// profsh.trace{pid=, steps=, output=, timeout=}: the next `steps` steps of a workload started
// with profsh run --on-demand, as a Trace (also saved at `output`).
int OnDemandTrace(lua_State* L) {
  return Protect(L, [&] {
    Options opts(L, 1, "trace", {"pid", "steps", "output", "timeout"});
    int64_t pid = opts.Int("pid", 0), steps = opts.Int("steps", 0);
    if (pid <= 0) throw LuaError("bad option 'pid' to 'trace' (a process id expected)");
    if (steps <= 0)
      throw LuaError("bad option 'steps' to 'trace' (a positive number of steps expected)");
    std::string output = opts.String("output").value_or("");
    if (output.empty()) output = NewTracePath("profsh-" + std::to_string(pid));
    output = AbsolutePath(output);
    auto saved = RequestOnDemandTrace(pid, steps, output, opts.Number("timeout").value_or(0));
    if (!saved.ok()) throw LuaError(saved.error().message);
    auto trace = LoadTrace(saved.value());
    if (!trace.ok()) throw LuaError(trace.error().message);
    PushTrace(L, std::shared_ptr<Trace>(std::move(trace.value())));
    return 1;
  });
}

// profsh.record_function(name, fn, ...): fn(...) as a named range of the started profile. Not
// wrapped in Protect as a whole: fn's errors pass through unchanged, and nothing with a
// destructor lives in this frame when they do.
int RecordFunction(lua_State* L) {
  size_t len = 0;
  const char* name = lua_tolstring(L, 1, &len);
  if (name == nullptr)
    return luaL_error(L, "bad argument #1 to 'record_function' (a name expected, got %s)",
                      luaL_typename(L, 1));
  luaL_checktype(L, 2, LUA_TFUNCTION);
  // The profile stays on the stack while fn runs, so that it outlives fn even if fn stops it and
  // lets go of it.
  lua_getfield(L, LUA_REGISTRYINDEX, kCurrentProfile);
  lua_insert(L, 1);
  auto* h = static_cast<ProfileHandle*>(luaL_testudata(L, 1, kProfileType));
  std::optional<InProcessRecorder::RangeToken> range;
  if (h != nullptr && h->started()) {
    Protect(L, [&] {
      range = h->recorder->BeginRange(std::string_view(name, len));
      return 0;
    });
  }
  const int base = 3;  // the profile, the name, fn
  const int status = lua_pcall(L, lua_gettop(L) - base, LUA_MULTRET, 0);
  if (range) h->recorder->EndRange(*range);
  if (status != LUA_OK) return lua_error(L);
  return lua_gettop(L) - 2;
}

void PushSummary(lua_State* L, const SessionSummary& s) {
  lua_createtable(L, 0, static_cast<int>(std::size(kSummaryCounts)) + 1);
  for (const SummaryCount& c : kSummaryCounts) {
    lua_pushinteger(L, static_cast<lua_Integer>(c.Value(s)));
    lua_setfield(L, -2, c.key);
  }
  std::string text = DescribeRecording(s);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "text");
  if (!s.sampling_method.empty()) {
    lua_pushlstring(L, s.sampling_method.data(), s.sampling_method.size());
    lua_setfield(L, -2, "sampling_method");
  }
  // A step marker that never matched: the range names met most often, to pick one from.
  if (!s.names_before_first_step.empty()) {
    auto names = s.names_before_first_step;
    std::stable_sort(names.begin(), names.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    lua_createtable(L, static_cast<int>(names.size()), 0);
    for (size_t i = 0; i < names.size(); ++i) {
      lua_createtable(L, 0, 2);
      lua_pushlstring(L, names[i].first.data(), names[i].first.size());
      lua_setfield(L, -2, "name");
      lua_pushinteger(L, static_cast<lua_Integer>(names[i].second));
      lua_setfield(L, -2, "count");
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_setfield(L, -2, "names_before_first_step");
  }
}

// A Trace method called on the profile: the trace takes the place of `self`. Upvalues: the
// method's name and the Trace's function.
int ForwardToTrace(lua_State* L) {
  ProfileHandle* h = static_cast<ProfileHandle*>(luaL_testudata(L, 1, kProfileType));
  const char* method = lua_tostring(L, lua_upvalueindex(1));
  if (h == nullptr) {
    return luaL_error(L, "bad argument #1 to '%s' (profsh.Profile expected; call it as p:%s(...))",
                      method, method);
  }
  if (!h->ran)
    return luaL_error(L, "the profile has not run yet: call p:run{...} before p:%s()", method);
  if (lua_getiuservalue(L, 1, kTraceValue) != LUA_TUSERDATA) {
    return luaL_error(L, "the profile has no trace: no window was recorded (were there steps?)");
  }
  lua_replace(L, 1);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Fields (RegisterType's __index has looked for a method first).
int ProfileField(lua_State* L) {
  ProfileHandle* h = static_cast<ProfileHandle*>(lua_touserdata(L, 1));
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  const std::string_view key = lua_tostring(L, 2);
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
  if (key == "windows") {  // traces handed to on_trace_ready (1 for a run without a schedule)
    if (!h->ran) return 0;
    lua_pushinteger(L, static_cast<lua_Integer>(h->windows));
    return 1;
  }
  if (key == "flight_recorder") {  // the ring's counts after a flight recording
    if (!h->ran || !h->flight) return 0;
    const FlightRecorder::Stats& s = h->flight_stats;
    lua_createtable(L, 0, 10);
    const std::pair<const char*, uint64_t> counts[] = {{"steps_seen", s.steps_seen},
                                                       {"steps_kept", s.steps_kept},
                                                       {"bytes_kept", s.bytes_kept},
                                                       {"peak_steps_kept", s.peak_steps_kept},
                                                       {"peak_bytes_kept", s.peak_bytes_kept},
                                                       {"steps_dropped", s.steps_dropped},
                                                       {"triggers_fired", s.triggers_fired},
                                                       {"trigger_errors", s.trigger_errors},
                                                       {"dumps", s.dumps},
                                                       {"hangs", h->hangs}};
    for (const auto& [name, n] : counts) {
      lua_pushinteger(L, static_cast<lua_Integer>(n));
      lua_setfield(L, -2, name);
    }
    return 1;
  }
  if (key == "trace") {
    if (!h->ran) return 0;
    lua_getiuservalue(L, 1, kTraceValue);
    return 1;
  }
  // A trace field (duration, warnings, ...), read with the key still on the stack.
  if (!h->ran || lua_getiuservalue(L, 1, kTraceValue) != LUA_TUSERDATA) return 0;
  lua_pushvalue(L, 2);
  lua_gettable(L, -2);
  return 1;
}

int ProfileToString(lua_State* L) {
  ProfileHandle* h = static_cast<ProfileHandle*>(lua_touserdata(L, 1));
  std::string activities;
  for (const auto& a : h->options.activities) activities += (activities.empty() ? "" : ",") + a;
  std::string s = "<profsh.Profile " + activities + ": ";
  if (h->started()) {
    s += "recording in this process, step " + std::to_string(h->recorder->step_num()) + ">";
  } else if (h->in_process) {
    s += "recorded in this process, " + std::to_string(h->windows) + " windows>";
  } else if (!h->ran) {
    s += "not run yet>";
  } else {
    s += "exit status " + std::to_string(h->launch.exit_code) + ", " +
         DescribeRecording(h->summary) + ">";
  }
  lua_pushstring(L, s.c_str());
  return 1;
}

}  // namespace

void RegisterProfile(lua_State* L) {
  RegisterType(L, kProfileType, {{"run", Run}, {"start", Start}, {"step", Step}, {"stop", Stop}},
               ProfileField,
               {"exit_code", "signal", "session", "summary", "activities", "windows", "trace",
                "flight_recorder", "duration", "warnings", "metadata"},
               {{"__gc", GcUserdata<ProfileHandle>}, {"__tostring", ProfileToString}});
  // Every method of the Trace (registered before) is also the profile's, unless the profile has
  // its own of that name; the closures live in __methods, where :help and completion look.
  luaL_getmetatable(L, kProfileType);
  lua_getfield(L, -1, "__methods");
  const int profile_methods = lua_gettop(L);
  luaL_getmetatable(L, kTraceType);
  lua_getfield(L, -1, "__methods");
  const int trace_methods = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, trace_methods) != 0) {  // name, function
    lua_pushvalue(L, -2);
    const bool taken = lua_rawget(L, profile_methods) != LUA_TNIL;
    lua_pop(L, 1);
    if (!taken) {
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_pushcclosure(L, ForwardToTrace, 2);
      lua_pushvalue(L, -3);
      lua_insert(L, -2);
      lua_rawset(L, profile_methods);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 4);
  lua_pushcfunction(L, Profile);
  lua_setfield(L, -2, "profile");
  lua_pushcfunction(L, RecordFunction);
  lua_setfield(L, -2, "record_function");
  lua_pushcfunction(L, OnDemandTrace);
  lua_setfield(L, -2, "trace");
}

}  // namespace profsh::lua
