// A fixed amount of CPU work, for the cpu activity's overhead: a recursion 24 frames deep (so
// that each sample carries a real stack) around an arithmetic loop; prints the process's CPU
// time (every thread's user + system: a busy shared machine stretches wall time, not CPU time)
// and the wall time.
//   fixed_work ITERATIONS_MILLIONS
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

__attribute__((noipa)) static double leaf(long n) {
  double x = sink;
  for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

__attribute__((noipa)) static double deep(int depth, long n) {
  return depth == 0 ? leaf(n) : deep(depth - 1, n) + 1e-12;
}

int main(int argc, char** argv) {
  const long millions = argc > 1 ? atol(argv[1]) : 500;
  struct timespec a, b, ca, cb;
  clock_gettime(CLOCK_MONOTONIC, &a);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
  for (long m = 0; m < millions; ++m) sink = deep(24, 1000000);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.4f %.4f\n", (cb.tv_sec - ca.tv_sec) + (cb.tv_nsec - ca.tv_nsec) / 1e9,
         (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
  return 0;
}
