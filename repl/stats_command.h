// `profsh stats TRACE [--report NAME] [--format table|csv]`: Nsight Systems' statistical reports
// from any trace profsh loads, with nsys' column headers.
#pragma once

namespace profsh::repl {

int RunStatsCommand(int argc, char** argv);
// `profsh kernels TRACE [--format table|csv]`: PyProf's kernel table.
int RunKernelsCommand(int argc, char** argv);

}  // namespace profsh::repl
