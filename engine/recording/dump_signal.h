// SIGUSR2 sent to profsh while it runs a flight recording asks for a dump of every process's
// ring, as `profsh trace --pid PID --dump` does. The handler only counts; the run's poll takes
// the count and dumps.
#pragma once

namespace profsh {

class DumpSignal {
 public:
  // Installs the SIGUSR2 handler until destroyed (the previous disposition comes back then).
  DumpSignal();
  ~DumpSignal();
  DumpSignal(const DumpSignal&) = delete;
  DumpSignal& operator=(const DumpSignal&) = delete;
  // Whether SIGUSR2 came since the last call.
  static bool Take();
};

}  // namespace profsh
