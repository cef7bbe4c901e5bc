// Putting the Python calls' profile function (python_calls.h) on the threads other than the one
// that imported torch: those running already, and those `threading` starts later. Each begins
// recording at its own first event (its frames are read there, on the thread itself). A thread
// that has a profile function already (a profiler of the user's) is left alone, and that is
// said on stderr.
#pragma once

#include <Python.h>

namespace profsh_torch {

// With the GIL. Installs `hook` on the interpreter's other threads that have no profile
// function; returns how many got it.
int TraceRunningThreads(Py_tracefunc hook);

// With the GIL. Makes each thread that `threading` starts from now on install `hook` (through
// threading.setprofile and a C callable, entered once per thread); false when threading has a
// profile function of the user's already, or cannot be read.
bool TraceThreadsStartedLater(Py_tracefunc hook);

}  // namespace profsh_torch
