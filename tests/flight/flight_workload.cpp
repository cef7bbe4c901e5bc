// Workloads for the flight recorder's end-to-end tests (check_flight.py): steps marked with
// profsh_step(), each holding an NVTX range "work", with a known slow step, a leak from a known
// step, or many short steps.
//
//   flight_workload slow STEPS SLOW_STEP MS     step SLOW_STEP sleeps 3 x MS, the others MS
//   flight_workload leak STEPS FROM MS BYTES    64 MiB in step 0; from step FROM, BYTES a step
//                                               kept (each step also frees what it allocates)
//   flight_workload steps STEPS US              STEPS steps of US microseconds (the collector
//                                               logs up to 4096 step boundaries a drain round)
//   flight_workload spin STEPS US               STEPS steps of US microseconds on CPU (shorter
//                                               steps than a sleep gives: nanosleep's slack)
//   flight_workload busy STEPS MS               STEPS steps, each MS ms on CPU in busy_step()
//   flight_workload threads N STEPS             STEPS steps on the main thread, then N threads
//                                               that each record 10 "worker" ranges
#include <nvtx3/nvToolsExt.h>

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "include/profsh.h"

namespace {

void SleepUs(long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

long Arg(int argc, char** argv, int i, long fallback) {
  return argc > i ? std::atol(argv[i]) : fallback;
}

int Slow(long steps, long slow_step, long ms) {
  for (long i = 0; i < steps; ++i) {
    profsh_step();
    nvtxRangePushA("work");
    SleepUs((i == slow_step ? 3 * ms : ms) * 1000);
    nvtxRangePop();
  }
  return 0;
}

std::vector<void*> g_kept;

int Leak(long steps, long from, long ms, long bytes) {
  for (long i = 0; i < steps; ++i) {
    profsh_step();
    nvtxRangePushA("work");
    if (i == 0) {
      void* base = std::malloc(64 << 20);
      std::memset(base, 1, 4096);
      g_kept.push_back(base);
    }
    void* scratch = std::malloc(1 << 20);  // allocated and freed within the step
    std::memset(scratch, 2, 4096);
    std::free(scratch);
    if (i >= from) {
      void* leaked = std::malloc(static_cast<size_t>(bytes));
      std::memset(leaked, 3, 4096);
      g_kept.push_back(leaked);
    }
    SleepUs(ms * 1000);
    nvtxRangePop();
  }
  std::printf("kept %zu blocks\n", g_kept.size());
  return 0;
}

int Steps(long steps, long us) {
  for (long i = 0; i < steps; ++i) {
    profsh_step();
    nvtxRangePushA("work");
    SleepUs(us);
    nvtxRangePop();
  }
  return 0;
}

// On CPU for `us` microseconds of wall time: steps far shorter than a sleep can make.
int Spin(long steps, long us) {
  for (long i = 0; i < steps; ++i) {
    profsh_step();
    nvtxRangePushA("work");
    timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
      clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000 + (now.tv_nsec - start.tv_nsec) / 1000 < us);
    nvtxRangePop();
  }
  return 0;
}

// On CPU until `ms` of this thread's CPU time have passed: what the step's samples must name.
extern "C" __attribute__((noinline)) void busy_step(long ms) {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile double x = 1;
  do {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

int Busy(long steps, long ms) {
  for (long i = 0; i < steps; ++i) {
    profsh_step();
    nvtxRangePushA("work");
    busy_step(ms);
    nvtxRangePop();
  }
  return 0;
}

int Threads(long threads, long steps) {
  for (long i = 0; i < steps; ++i) {
    profsh_step();
    nvtxRangePushA("work");
    SleepUs(1000);
    nvtxRangePop();
  }
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t) {
    pool.emplace_back([] {
      for (int j = 0; j < 10; ++j) {
        nvtxRangePushA("worker");
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) t.join();
  profsh_step();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "slow")
    return Slow(Arg(argc, argv, 2, 200), Arg(argc, argv, 3, 37), Arg(argc, argv, 4, 20));
  if (mode == "leak")
    return Leak(Arg(argc, argv, 2, 80), Arg(argc, argv, 3, 50), Arg(argc, argv, 4, 5),
                Arg(argc, argv, 5, 16 << 20));
  if (mode == "busy") return Busy(Arg(argc, argv, 2, 20), Arg(argc, argv, 3, 30));
  if (mode == "threads") return Threads(Arg(argc, argv, 2, 3), Arg(argc, argv, 3, 5));
  if (mode == "spin") return Spin(Arg(argc, argv, 2, 10000), Arg(argc, argv, 3, 50));
  if (mode == "steps") return Steps(Arg(argc, argv, 2, 10000), Arg(argc, argv, 3, 200));
  std::fprintf(stderr, "flight_workload: unknown mode '%s'\n", mode.c_str());
  return 2;
}
