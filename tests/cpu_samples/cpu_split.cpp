// The cpu activity's workload with a known split of CPU time (thread CPU time, measured):
//   main_spin   30 %  (main program, NVTX range "phase_main")
//   lib_spin    30 %  (a library loaded with dlopen, range "phase_lib")
//   run_inlined 20 %  (its loop body, inlined_step, is always inlined; range "phase_inline")
//   pool_spin   20 %  (two pool threads, 10 % each, range "pool_task" on each)
//
//   cpu_split LIBRARY [TOTAL_MS]
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

extern "C" {
#include "tests/cpu_samples/burn.h"
}

namespace {

volatile double sink;

__attribute__((noipa)) void main_chunk() {
  double x = sink;
  for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

__attribute__((noinline)) void main_spin(double ms) {
  PROFSH_BURN(ms, main_chunk());
}

__attribute__((always_inline)) inline double inlined_step(double x) {
  for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

__attribute__((noinline)) void run_inlined(double ms) {
  double x = sink;
  PROFSH_BURN(ms, x = inlined_step(x));
  sink = x;
}

__attribute__((noipa)) void pool_chunk() {
  double x = sink;
  for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

__attribute__((noinline)) void pool_spin(double ms) {
  PROFSH_BURN(ms, pool_chunk());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cpu_split LIBRARY [TOTAL_MS]\n");
    return 2;
  }
  const double total = argc > 2 ? std::atof(argv[2]) : 1000;
  nvtxRangePushA("phase_main");
  main_spin(0.3 * total);
  nvtxRangePop();

  nvtxRangePushA("phase_lib");
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == nullptr) {
    std::fprintf(stderr, "cpu_split: %s\n", dlerror());
    return 1;
  }
  auto lib_spin = reinterpret_cast<void (*)(double)>(dlsym(lib, "lib_spin"));
  if (lib_spin == nullptr) return 1;
  lib_spin(0.3 * total);
  nvtxRangePop();

  nvtxRangePushA("phase_inline");
  run_inlined(0.2 * total);
  nvtxRangePop();

  std::vector<std::thread> pool;
  for (int t = 0; t < 2; ++t) {
    pool.emplace_back([total] {
      nvtxRangePushA("pool_task");
      pool_spin(0.1 * total);
      nvtxRangePop();
    });
  }
  for (std::thread& t : pool) t.join();
  return 0;
}
