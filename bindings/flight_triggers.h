// Flight-recorder triggers written in Lua, for callers that do not touch the Lua C API (the
// command line): an expression over `step` and `history`, run in a Lua state of its own.
#pragma once

#include <memory>
#include <string>

#include "engine/analysis/flight/step_triggers.h"
#include "engine/util/result.h"

namespace profsh::lua {

// `expression` (e.g. "step.duration > 1.3 * history.p95"): true or a reason string keeps the
// step. Fails when it does not compile.
Result<std::unique_ptr<StepTrigger>> MakeExpressionTrigger(const std::string& expression);

}  // namespace profsh::lua
