// `profsh run [options] -- CMD [ARGS...]`: runs an unmodified workload under the collector,
// prints its key_averages table and saves the trace. Exits with the workload's status.
#pragma once

#include <string>

#include "engine/session/recording.h"

namespace profsh::repl {

int RunRunCommand(int argc, char** argv);

// Shared by the ways `profsh run` records (run_command.cpp, flight_run.cpp).
// BASE.PID.N.EXT for window N of process PID.
std::string WindowPath(const std::string& output, const WindowInfo& w);
// Why a long job recorded nothing, when the reason is known: ": no range or mark matched ...".
std::string WhyNoWindow(const LaunchOptions& launch, const LiveRecording& r);
// What profsh did with the signals it received while the workload ran.
void ReportSignals(const LaunchOptions& launch, const LaunchResult& r);
// A run whose trace was lost fails, keeping the workload's own failure if it had one.
int ExitStatusWhenNotSaved(int workload_status);

}  // namespace profsh::repl
