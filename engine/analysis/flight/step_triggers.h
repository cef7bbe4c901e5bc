// What decides that a step is worth keeping: the history of the steps before it (their
// summaries, with the durations' median and percentiles) and triggers that look at a step's
// summary and that history, never at events. The built-in triggers are here; a Lua trigger
// (bindings/) implements the same interface.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "engine/analysis/flight/step_summary.h"
#include "engine/util/result.h"

namespace profsh {

// The steps of one process before the step being judged, oldest first, and their durations'
// statistics (percentiles interpolated linearly between ranks, as numpy's default).
struct StepHistory {
  const std::deque<StepSummary>* steps = nullptr;
  size_t count = 0;
  int64_t min_ns = 0, max_ns = 0;
  double mean_ns = 0, median_ns = 0, p90_ns = 0, p95_ns = 0, p99_ns = 0;
};
StepHistory MakeStepHistory(const std::deque<StepSummary>& steps);

// A trigger's answer: a reason to keep the step, nothing, or an error.
using TriggerVerdict = Result<std::optional<std::string>>;
inline TriggerVerdict NotTriggered() {
  return std::optional<std::string>();
}

class StepTrigger {
 public:
  virtual ~StepTrigger() = default;
  // How the user wrote it, for messages.
  virtual const std::string& spec() const = 0;
  // A reason when the step should be kept, nothing when not; an error disables the trigger.
  virtual Result<std::optional<std::string>> Check(const StepSummary& step,
                                                   const StepHistory& history) = 0;
};

// slow-step needs this many earlier steps before it judges one.
inline constexpr size_t kSlowStepMinHistory = 5;

// "slow-step[:FACTOR]", "memory-growth[:N%]", "gpu-idle[:N%]", "range:NAME>MS".
bool IsBuiltInTrigger(const std::string& spec);
Result<std::unique_ptr<StepTrigger>> MakeBuiltInTrigger(const std::string& spec);

}  // namespace profsh
