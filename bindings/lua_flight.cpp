#include "bindings/lua_flight.h"

extern "C" {
#include <lauxlib.h>
#include <lualib.h>
}

#include "bindings/flight_triggers.h"

namespace profsh::lua {

namespace {

double Ms(double ns) {
  return ns / 1e6;
}

void SetNumber(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}
void SetInteger(lua_State* L, const char* key, int64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, key);
}

void PushNamedTimes(lua_State* L, const std::vector<NamedTime>& rows, size_t limit) {
  const size_t n = std::min(rows.size(), limit);
  lua_createtable(L, static_cast<int>(n), 0);
  for (size_t i = 0; i < n; ++i) {
    lua_createtable(L, 0, 3);
    lua_pushlstring(L, rows[i].name.data(), rows[i].name.size());
    lua_setfield(L, -2, "name");
    SetNumber(L, "time", Ms(static_cast<double>(rows[i].total_ns)));
    SetInteger(L, "count", static_cast<int64_t>(rows[i].count));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// Calls a Lua function as trigger(step, history) in its state.
class FunctionTrigger final : public StepTrigger {
 public:
  FunctionTrigger(lua_State* L, int ref, std::string spec, bool owns_state)
      : L_(L), ref_(ref), spec_(std::move(spec)), owns_state_(owns_state) {}
  ~FunctionTrigger() override {
    if (owns_state_) {
      lua_close(L_);
    } else {
      luaL_unref(L_, LUA_REGISTRYINDEX, ref_);
    }
  }
  const std::string& spec() const override { return spec_; }
  Result<std::optional<std::string>> Check(const StepSummary& step,
                                           const StepHistory& history) override {
    const int top = lua_gettop(L_);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    PushStepSummary(L_, step);
    PushStepHistory(L_, history);
    if (lua_pcall(L_, 2, 1, 0) != LUA_OK) {
      std::string message =
          lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(error object is not a string)";
      lua_settop(L_, top);
      return Error{message};
    }
    std::optional<std::string> reason;
    if (lua_type(L_, -1) == LUA_TSTRING) {
      reason = lua_tostring(L_, -1);
    } else if (lua_toboolean(L_, -1)) {
      reason = "trigger '" + spec_ + "' at step " + std::to_string(step.step);
    }
    lua_settop(L_, top);
    return reason;
  }

 private:
  lua_State* L_;
  int ref_;
  std::string spec_;
  bool owns_state_;
};

}  // namespace

void PushStepSummary(lua_State* L, const StepSummary& s) {
  lua_createtable(L, 0, 20);
  SetInteger(L, "step", s.step);
  SetInteger(L, "pid", s.pid);
  SetNumber(L, "duration", Ms(static_cast<double>(s.duration_ns)));
  lua_pushboolean(L, s.has_gpu);
  lua_setfield(L, -2, "has_gpu");
  SetNumber(L, "gpu_busy", Ms(static_cast<double>(s.gpu_busy_ns)));
  SetNumber(L, "gpu_idle", Ms(static_cast<double>(s.gpu_idle_ns)));
  SetNumber(L, "gpu_idle_fraction", s.gpu_idle_fraction);
  lua_createtable(L, 0, static_cast<int>(s.ranges.size()));
  for (const NamedTime& r : s.ranges) {
    lua_pushnumber(L, Ms(static_cast<double>(r.total_ns)));
    lua_setfield(L, -2, r.name.c_str());
  }
  lua_setfield(L, -2, "ranges");
  PushNamedTimes(L, s.ranges, kStepTopOperators);
  lua_setfield(L, -2, "top_ranges");
  PushNamedTimes(L, s.top_operators, kStepTopOperators);
  lua_setfield(L, -2, "top_operators");
  lua_pushboolean(L, s.has_memory);
  lua_setfield(L, -2, "has_memory");
  SetInteger(L, "memory_at_start", s.memory_at_start);
  SetInteger(L, "memory_peak", s.memory_peak);
  SetInteger(L, "memory_growth", s.memory_growth);
  SetInteger(L, "memory_at_end", s.memory_at_end());
  SetInteger(L, "dropped", static_cast<int64_t>(s.dropped));
  SetInteger(L, "events", static_cast<int64_t>(s.events));
  lua_createtable(L, static_cast<int>(s.top_functions.size()), 0);
  for (size_t i = 0; i < s.top_functions.size(); ++i) {
    lua_createtable(L, 0, 2);
    lua_pushlstring(L, s.top_functions[i].name.data(), s.top_functions[i].name.size());
    lua_setfield(L, -2, "name");
    SetInteger(L, "samples", static_cast<int64_t>(s.top_functions[i].samples));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "top_functions");
}

void PushStepHistory(lua_State* L, const StepHistory& h) {
  lua_createtable(L, static_cast<int>(h.count), 9);
  SetInteger(L, "count", static_cast<int64_t>(h.count));
  SetNumber(L, "min", Ms(static_cast<double>(h.min_ns)));
  SetNumber(L, "max", Ms(static_cast<double>(h.max_ns)));
  SetNumber(L, "mean", Ms(h.mean_ns));
  SetNumber(L, "median", Ms(h.median_ns));
  SetNumber(L, "p50", Ms(h.median_ns));
  SetNumber(L, "p90", Ms(h.p90_ns));
  SetNumber(L, "p95", Ms(h.p95_ns));
  SetNumber(L, "p99", Ms(h.p99_ns));
  if (h.steps == nullptr) return;
  lua_Integer i = 0;
  for (const StepSummary& s : *h.steps) {
    PushStepSummary(L, s);
    lua_rawseti(L, -2, ++i);
  }
}

std::unique_ptr<StepTrigger> MakeFunctionTrigger(lua_State* L, int ref, std::string spec) {
  return std::make_unique<FunctionTrigger>(L, ref, std::move(spec), false);
}

Result<std::unique_ptr<StepTrigger>> MakeExpressionTrigger(const std::string& expression) {
  lua_State* L = luaL_newstate();
  if (L == nullptr) return Error{"--trigger: cannot create a Lua state"};
  luaL_openlibs(L);
  const std::string chunk = "local step, history = ...\nreturn (" + expression + "\n)";
  if (luaL_loadbuffer(L, chunk.data(), chunk.size(), "=--trigger") != LUA_OK) {
    std::string message = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
    lua_close(L);
    return Error{"--trigger '" + expression +
                 "' is neither a built-in trigger (slow-step[:FACTOR], memory-growth[:N%], "
                 "gpu-idle[:N%], range:NAME>MS) nor a Lua expression: " +
                 message};
  }
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return std::unique_ptr<StepTrigger>(new FunctionTrigger(L, ref, expression, true));
}

}  // namespace profsh::lua
