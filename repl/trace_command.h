// `profsh trace --pid PID --steps N`: asks a workload started with `profsh run --on-demand` to
// record its next N steps, then prints that window's table and where its trace was saved.
#pragma once

namespace profsh::repl {

int RunTraceCommand(int argc, char** argv);

}  // namespace profsh::repl
