// `profsh run --flight-recorder N|Ss [--trigger SPEC]... -- CMD`: every step recorded and kept
// in a bounded ring on the host; the steps around each trigger saved as BASE.PID.N.profsh.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/session/flight_recorder.h"
#include "engine/session/recording.h"
#include "engine/session/flight_dumps.h"

namespace profsh::repl {

struct FlightSettings {
  FlightRecorderOptions options;
  std::vector<std::unique_ptr<StepTrigger>> triggers;
  WatchdogSettings watchdog;  // --watchdog SECONDS, --watchdog-kill
};

// "20" (steps) or "30s" (seconds) into `options`; false when it is neither.
bool ParseFlightRecorderSpan(const std::string& text, FlightRecorderOptions* options);
// A built-in trigger, else a Lua expression.
Result<std::unique_ptr<StepTrigger>> MakeTrigger(const std::string& spec);

int RunFlightRecorder(LaunchOptions& launch, std::string output, FlightSettings settings,
                      bool keep_session);

}  // namespace profsh::repl
