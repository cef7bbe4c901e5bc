// The NVTX sample at full rate, in steps: STEPS steps (an NVTX "step" range each, the flight
// recorder's step marker), each PAIRS push/pop pairs back to back; prints the median ns per pair
// over the steps after the first (bench/flight_recorder_bench.py runs it bare, under profsh run
// and under profsh run --flight-recorder).
//   flight_nvtx STEPS PAIRS
#include <nvtx3/nvToolsExt.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: flight_nvtx STEPS PAIRS\n");
    return 2;
  }
  const int steps = std::atoi(argv[1]);
  const long pairs = std::atol(argv[2]);
  if (steps < 2 || pairs < 1) {
    std::fprintf(stderr, "flight_nvtx: at least 2 steps and 1 pair\n");
    return 2;
  }
  std::vector<double> per_pair;
  for (int s = 0; s < steps; ++s) {
    nvtxRangePushA("step");
    const double start = NowNs();
    for (long i = 0; i < pairs; ++i) {
      nvtxRangePushA("range");
      nvtxRangePop();
    }
    const double elapsed = NowNs() - start;
    nvtxRangePop();
    if (s > 0) per_pair.push_back(elapsed / static_cast<double>(pairs));
  }
  std::sort(per_pair.begin(), per_pair.end());
  std::printf("%.2f\n", per_pair[per_pair.size() / 2]);
  return 0;
}
