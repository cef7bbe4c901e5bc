// Runs a workload under the collector: a private session folder, the injection variables
// (LD_PRELOAD, NVTX_INJECTION64_PATH, INTEL_LIBITTNOTIFY64) in its environment, and the exit
// status it ended with. Used by `profsh run` and by profsh.profile():run().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace profsh {

struct LaunchOptions {
  std::vector<std::string> argv;  // the command; argv[0] is looked up in PATH
  std::vector<std::string> activities{"nvtx", "itt"};
  std::string collector;   // the runtime library; FindCollector() when empty
  uint32_t buffer_kb = 0;  // per-thread buffer; 0: the runtime's default
  uint32_t drain_ms = 0;   // drain interval; 0: the runtime's default
};

struct LaunchResult {
  int exit_code = 0;    // the workload's status, as a shell reports it (128 + signal if killed)
  int term_signal = 0;  // the signal that killed it, or 0
  std::string session;  // the folder its processes wrote their streams to
  std::vector<std::string> notices;  // what the user should know (an injection not taken over)
};

// The activities profsh can collect from an unmodified workload.
const std::vector<std::string>& KnownActivities();

// The collector library: $PROFSH_COLLECTOR, or libprofsh_collector.so beside the executable
// (or in ../lib/profsh).
Result<std::string> FindCollector();

// A new folder, readable only by this user, for one session's streams.
Result<std::string> CreateSessionFolder();

// Starts the workload, waits for it (Ctrl-C goes to the workload; profsh waits on and then
// reads what was recorded) and returns how it ended. Fails only when it could not be started.
Result<LaunchResult> RunWorkload(const LaunchOptions& options);

// Removes a session folder and its streams.
void RemoveSessionFolder(const std::string& folder);

}  // namespace profsh
