// The cpu activity's workload for live windows (check_window_samples.py): steps whose CPU time
// is known, some to be recorded and some not.
//
//   cpu_steps steps MS PATTERN   one step per character, each an NVTX range "step" (the step
//                                marker): 'a' burns 60 % of MS in part_a_chunk (range "part_a")
//                                and 40 % in part_b_chunk (range "part_b"); 'w' burns MS in
//                                wait_chunk. Prints "step I START_NS" before each step and
//                                "end END_NS" after the last (CLOCK_REALTIME).
//   cpu_steps capture MS         wait_chunk for MS; an NVTX range "capture" around 60/40 of MS in
//                                part_a/part_b; wait_chunk for MS; a "capture" range around a
//                                sleep of MS (no CPU time). Prints "capture BEGIN_NS END_NS" for
//                                each range.
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "burn.h"

static volatile double sink;

#define CHUNK(name)                                                    \
  __attribute__((noipa)) static void name(void) {                      \
    double x = sink;                                                   \
    for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9 + (#name)[0]; \
    sink = x;                                                          \
  }
CHUNK(part_a_chunk)
CHUNK(part_b_chunk)
CHUNK(wait_chunk)

static long long RealNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void Busy(double ms) {
  nvtxRangePushA("part_a");
  PROFSH_BURN(0.6 * ms, part_a_chunk());
  nvtxRangePop();
  nvtxRangePushA("part_b");
  PROFSH_BURN(0.4 * ms, part_b_chunk());
  nvtxRangePop();
}

static void Capture(void (*body)(double), double ms) {
  const long long begin = RealNs();
  nvtxRangePushA("capture");
  body(ms);
  nvtxRangePop();
  printf("capture %lld %lld\n", begin, RealNs());
}

static void Sleep(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (long)(ms / 1000)) * 1e6)};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cpu_steps steps MS PATTERN | cpu_steps capture MS\n");
    return 2;
  }
  const double ms = atof(argv[2]);
  if (strcmp(argv[1], "steps") == 0 && argc > 3) {
    const char* pattern = argv[3];
    for (size_t i = 0; pattern[i]; ++i) {
      printf("step %zu %lld\n", i, RealNs());
      nvtxRangePushA("step");
      if (pattern[i] == 'a')
        Busy(ms);
      else
        PROFSH_BURN(ms, wait_chunk());
      nvtxRangePop();
    }
    printf("end %lld\n", RealNs());
  } else if (strcmp(argv[1], "capture") == 0) {
    PROFSH_BURN(ms, wait_chunk());
    Capture(Busy, ms);
    PROFSH_BURN(ms, wait_chunk());
    Capture(Sleep, ms);
  } else {
    fprintf(stderr, "cpu_steps: unknown mode %s\n", argv[1]);
    return 2;
  }
  fflush(stdout);
  return 0;
}
