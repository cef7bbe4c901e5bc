// A step's summary and its history as Lua tables, and a StepTrigger that calls a Lua function
// with them: what profsh.profile{trigger=} and `profsh run --trigger EXPR` run.
#pragma once

#include <memory>
#include <string>

extern "C" {
#include <lua.h>
}

#include "engine/analysis/flight/step_triggers.h"

namespace profsh::lua {

// step = {step, pid, duration (ms), gpu_busy, gpu_idle (ms), gpu_idle_fraction, ranges =
// {[name] = ms}, top_ranges / top_operators = {{name, time (ms), count}}, memory_at_start,
// memory_peak, memory_growth, memory_at_end (bytes), dropped, events, top_functions =
// {{name, samples}}}.
void PushStepSummary(lua_State* L, const StepSummary& s);
// history = {count, min, max, mean, median, p50, p90, p95, p99 (ms of step duration), and the
// summaries oldest first at 1..count}.
void PushStepHistory(lua_State* L, const StepHistory& h);

// Calls the function at registry reference `ref` of `L` (which the trigger owns and releases)
// as trigger(step, history): true or a string keeps the step, a Lua error fails the check.
std::unique_ptr<StepTrigger> MakeFunctionTrigger(lua_State* L, int ref, std::string spec);

}  // namespace profsh::lua
