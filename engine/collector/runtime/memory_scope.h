// Whose allocations profile_memory records. By default the processes a user means: the command
// profsh started (and what it execs into), Python processes and processes linked with torch.
// Left out: everything else the workload runs, such as the compilers torch.compile starts
// (two cc1plus processes made 1.25 M allocations against Python's 99 k). profile_memory="all"
// records every process. Decided once per process image, before it allocates much, so that a
// left-out process pays nothing per allocation; the reader counts the left-out processes from
// their configuration block (kConfigMemoryLeftOut).
#pragma once

namespace profsh::runtime {

// Whether this process image's allocations are recorded (true when memory is not profiled:
// nothing is left out). When not, libprofsh_memory.so is told to report nothing.
bool RecordsMemoryHere();

}  // namespace profsh::runtime
