// profsh run --watchdog SECONDS: a process that has begun steps before and begins none for
// SECONDS is taken as hung. The watchdog fires once per quiet spell of a process (again only
// after that process has stepped again), with every running process's open ranges, last
// collectives and last step (decoding/hang_watch.h), for the dump and the report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/decoding/hang_watch.h"

namespace profsh {

struct HangFinding {
  std::string reason;  // "watchdog: pid 12 began no step for 5.0 s (the last: step 41)"
  int64_t pid = 0;     // the quiet process
  int64_t at_ns = 0;   // CLOCK_REALTIME when it fired
  std::vector<ProcessHangState> processes;
};

class Watchdog {
 public:
  explicit Watchdog(int64_t quiet_ns) : quiet_ns_(quiet_ns) {}
  int64_t quiet_ns() const { return quiet_ns_; }
  // `processes`: the running processes now (LiveSession::HangStates); `now_ns`: CLOCK_REALTIME.
  std::optional<HangFinding> Check(std::vector<ProcessHangState> processes, int64_t now_ns);

 private:
  int64_t quiet_ns_;
  std::map<int64_t, int64_t> fired_;  // pid -> the last step it fired after
};

}  // namespace profsh
