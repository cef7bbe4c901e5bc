// The flight recorder's dumps that no step trigger asks for: on demand (`profsh trace --pid PID
// --dump` through the control socket, SIGUSR2 to profsh), on a hang (--watchdog SECONDS, and
// --watchdog-kill), and, after a trigger's dump in one process, the same time span of every
// other process. Every such dump covers one span of time in all the run's processes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/recording/dump_signal.h"
#include "engine/session/flight_recorder.h"
#include "engine/session/on_demand.h"
#include "engine/session/watchdog.h"

namespace profsh {

struct WatchdogSettings {
  double seconds = 0;  // 0: no watchdog
  bool kill = false;   // kill the workload's processes once the hang is dumped
};

class FlightDumps {
 public:
  // `save` writes dumps beside -o, says so, and returns the paths it saved.
  using Save = std::function<std::vector<std::string>(std::vector<FlightDump>)>;
  FlightDumps(FlightRecorder& recorder, WatchdogSettings watchdog, Save save);

  // The session exists: listens on its control socket.
  void Started(const std::string& session);
  // About every 20 ms: dump requests, SIGUSR2, the watchdog.
  void Inspect(LiveSession& live, ControlChannel& control);
  // Dumps a trigger made in one process: the other processes dump the same span.
  void AlsoDumpOthers(const std::vector<FlightDump>& dumps);
  // The workload ended: waiting clients are told.
  void Close();

  uint64_t hangs() const { return hangs_; }
  bool killed() const { return killed_; }

 private:
  // Dumps [begin_ns, end_ns] of every process (with the hang's ranges when given); the paths.
  std::vector<std::string> DumpAll(int64_t begin_ns, int64_t end_ns, const std::string& reason,
                                   const HangFinding* hang);
  // Where a dump of "the ring" starts: the oldest kept step of `pid` (0: of any process).
  int64_t RingBegin(int64_t pid, int64_t now_ns) const;

  FlightRecorder& recorder_;
  WatchdogSettings settings_;
  Save save_;
  std::unique_ptr<OnDemandServer> server_;
  DumpSignal dump_signal_;
  std::unique_ptr<Watchdog> watchdog_;
  int64_t last_check_ns_ = 0;
  uint64_t hangs_ = 0;
  bool killed_ = false;
};

}  // namespace profsh
