// The processes `profsh job map` starts (summarize children, the Dask driver) end with it, however
// it ends: killed itself (SIGKILL, Ctrl-C), or an error before it could reap them.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace profsh::repl {

// Call in the child right after fork(), `job_map` being getpid() before the fork: the kernel
// sends the child SIGKILL when the thread that forked it ends.
inline void DieWithJobMap(pid_t job_map) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != job_map) _exit(127);  // it ended before the prctl: no signal would come
}

}  // namespace profsh::repl
