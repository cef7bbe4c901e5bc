#include "engine/session/watchdog.h"

#include <cstdio>

namespace profsh {

std::optional<HangFinding> Watchdog::Check(std::vector<ProcessHangState> processes,
                                           int64_t now_ns) {
  const ProcessHangState* quiet = nullptr;
  for (const ProcessHangState& p : processes) {
    // A process that never stepped (a launcher, a data loader worker) is not watched itself.
    if (p.steps == 0 || now_ns - p.last_step_ns < quiet_ns_) continue;
    auto fired = fired_.find(p.pid);
    if (fired != fired_.end() && fired->second == p.last_step) continue;
    if (quiet == nullptr || p.last_step_ns < quiet->last_step_ns) quiet = &p;
  }
  if (quiet == nullptr) return std::nullopt;
  fired_[quiet->pid] = quiet->last_step;
  HangFinding f;
  f.pid = quiet->pid;
  f.at_ns = now_ns;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f",
                static_cast<double>(now_ns - quiet->last_step_ns) / 1e9);
  f.reason = "watchdog: pid " + std::to_string(quiet->pid) + " began no step for " + seconds +
             " s (the last: step " + std::to_string(quiet->last_step) + ")";
  f.processes = std::move(processes);
  return f;
}

}  // namespace profsh
