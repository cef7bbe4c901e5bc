// The cost of one annotated range as the application sees it: an NVTX push+pop pair and an ITT
// task begin+end pair, timed in a loop. Run it plain (no tool: NVTX and ITT calls are no-ops)
// and under `profsh run`; bench/collector_bench.sh does both in one run and prints the ratio.
//
//   collector_overhead nvtx|itt PAIRS_PER_ROUND ROUNDS
// Prints, in ns per pair over the rounds: the median pair, the median of two TSC reads (the
// clock floor of a pair) timed the same way right after each round, the best pair, the best
// floor, then the medians of both in thread CPU time (what preemption on a shared machine does
// not inflate). The machine is noisy, so the floor is measured in the same process and the
// same seconds as the pairs it bounds. Rounds are spaced by 60 ms, in which the drain thread
// empties the buffer: rounds of 50 000 pairs (1.6 MB of records, under the quarter of a ring
// that wakes the drain) are recorded with the drain asleep; rounds of millions of pairs run
// with the drain woken every quarter ring and encoding beside the loop, as a long job does.
//   collector_overhead clock
// Prints the cost of one TSC read and one clock_gettime(CLOCK_MONOTONIC), for context.
//   collector_overhead stress THREADS PAIRS
// THREADS threads push and pop PAIRS ranges each as fast as they can; prints the seconds they
// took, the CPU seconds the drain thread used meanwhile (and in the 100 ms after, for what was
// left in the rings; 0 with no tool) and the CPU seconds of the producers: on a shared machine
// the CPU times say whether the drain can keep up, whatever share of a core each one got.
#include <dirent.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "scripts/samples/itt_static_part.h"

using Itt = itt_client::StaticPart<1>;

namespace {

double NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Best(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

}  // namespace

int Clock() {
  constexpr int kReads = 20000000;
  uint64_t sink = 0;
  double t0 = NowNs();
#if defined(__x86_64__)
  for (int i = 0; i < kReads; ++i) sink += __builtin_ia32_rdtsc();
#endif
  double t1 = NowNs();
  for (int i = 0; i < kReads; ++i) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sink += static_cast<uint64_t>(ts.tv_nsec);
  }
  double t2 = NowNs();
  std::printf("%.2f %.2f %d\n", (t1 - t0) / kReads, (t2 - t1) / kReads, static_cast<int>(sink & 1));
  return 0;
}

double CpuSeconds(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// The CPU seconds used so far by this process's thread named `name` (0 when there is none):
// Linux's CPU clock of a thread of the calling process, made from its tid.
double ThreadCpuSeconds(const char* name) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  double seconds = 0;
  while (dirent* e = readdir(dir)) {
    char path[300], comm[64] = {};
    std::snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE* f = std::fopen(path, "r");
    if (f == nullptr) continue;
    const bool match =
        std::fgets(comm, sizeof comm, f) && std::strncmp(comm, name, std::strlen(name)) == 0;
    std::fclose(f);
    if (match) seconds = CpuSeconds(static_cast<clockid_t>((~std::atoi(e->d_name) << 3) | 6));
  }
  closedir(dir);
  return seconds;
}

int Stress(int threads, long pairs) {
  const double drain_before = ThreadCpuSeconds("profsh-drain");
  double start = NowNs();
  std::vector<std::thread> pool;
  std::vector<double> cpu(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([pairs, &cpu, t] {
      for (long i = 0; i < pairs; ++i) {
        nvtxRangePushA("stress");
        nvtxRangePop();
      }
      cpu[t] = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    });
  }
  for (auto& t : pool) t.join();
  const double elapsed = (NowNs() - start) / 1e9;
  // What is left in the rings is at most a ring each: let the drain thread take it.
  usleep(100000);
  double producers = 0;
  for (double c : cpu) producers += c;
  std::printf("%.3f %.3f %.3f\n", elapsed, ThreadCpuSeconds("profsh-drain") - drain_before,
              producers);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "clock") == 0) return Clock();
  if (argc >= 4 && std::strcmp(argv[1], "stress") == 0)
    return Stress(std::atoi(argv[2]), std::atol(argv[3]));
  if (argc < 4) {
    std::fprintf(stderr, "usage: collector_overhead nvtx|itt PAIRS_PER_ROUND ROUNDS\n");
    return 2;
  }
  const bool itt = std::strcmp(argv[1], "itt") == 0;
  const long pairs = std::atol(argv[2]);
  const int rounds = std::atoi(argv[3]);
  if (pairs < 1 || rounds < 1) {
    std::fprintf(stderr, "collector_overhead: PAIRS_PER_ROUND and ROUNDS must be at least 1\n");
    return 2;
  }
  Itt::Setup();
  const itt_client::Id null_id{0, 0, 0};
  itt_client::Domain* domain = Itt::domain_create("bench");
  itt_client::StringHandle* name = Itt::string_handle_create("task");
  // Warm up: loads the tool, claims the thread's buffer, fills caches.
  for (int i = 0; i < 1000; ++i) {
    if (itt) {
      if (Itt::task_begin && domain->flags) Itt::task_begin(domain, null_id, null_id, name);
      if (Itt::task_end && domain->flags) Itt::task_end(domain);
    } else {
      nvtxRangePushA("range");
      nvtxRangePop();
    }
  }
  std::vector<double> per_pair, per_floor, cpu_pair, cpu_floor;
  uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    usleep(60000);
    double cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    double start = NowNs();
    if (itt) {
      // What ittnotify's macros expand to: check the domain, call through the pointer.
      for (long i = 0; i < pairs; ++i) {
        if (Itt::task_begin && domain->flags) Itt::task_begin(domain, null_id, null_id, name);
        if (Itt::task_end && domain->flags) Itt::task_end(domain);
      }
    } else {
      for (long i = 0; i < pairs; ++i) {
        nvtxRangePushA("range");
        nvtxRangePop();
      }
    }
    per_pair.push_back((NowNs() - start) / static_cast<double>(pairs));
    cpu_pair.push_back((CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start) * 1e9 /
                       static_cast<double>(pairs));
    cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    start = NowNs();
#if defined(__x86_64__)
    for (long i = 0; i < pairs; ++i) {
      sink += __builtin_ia32_rdtsc();
      sink += __builtin_ia32_rdtsc();
    }
#endif
    per_floor.push_back((NowNs() - start) / static_cast<double>(pairs));
    cpu_floor.push_back((CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start) * 1e9 /
                        static_cast<double>(pairs));
  }
  std::printf("%.2f %.2f %.2f %.2f %.2f %.2f %d\n", Median(per_pair), Median(per_floor),
              Best(per_pair), Best(per_floor), Median(cpu_pair), Median(cpu_floor),
              static_cast<int>(sink & 1));
  return 0;
}
