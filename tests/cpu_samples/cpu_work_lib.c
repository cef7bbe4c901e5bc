// The shared library cpu_split loads with dlopen: a share of the CPU time spent in a module
// that was not mapped when the process started.
#include "burn.h"

static volatile double lib_sink;

__attribute__((noipa)) static void lib_chunk(void) {
  double x = lib_sink;
  for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  lib_sink = x;
}

__attribute__((visibility("default"))) void lib_spin(double ms) {
  PROFSH_BURN(ms, lib_chunk());
}
