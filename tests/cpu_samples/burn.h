// Burns a given amount of the calling thread's CPU time in the caller's own frame: the time is
// checked every ~0.2 ms of work, so nearly every sample lands in the burning function itself.
#pragma once

#include <time.h>

static inline double ThreadCpuMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define PROFSH_BURN(ms, work_per_check)            \
  do {                                             \
    const double until_ = ThreadCpuMs() + (ms);    \
    while (ThreadCpuMs() < until_) work_per_check; \
  } while (0)
