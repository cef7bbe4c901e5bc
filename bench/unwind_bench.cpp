// How many samples a second the unwinder sustains: this program samples itself (the trap of
// tests/symbols/snapshot_capture.h) DEPTH calls deep, with CFI and no frame pointers (as
// Debian's libraries are built), then unwinds that snapshot over and over, and symbolises the
// chain (cold once, then warm). Prints medians.
//   unwind_bench [DEPTH] [ITERATIONS] [RUNS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/symbols/symbolizer.h"
#include "engine/symbols/unwinder.h"
#include "tests/symbols/snapshot_capture.h"

using namespace profsh::symbols;

namespace {

volatile int g_sink;

__attribute__((noinline)) int Recurse(int depth) {
  if (depth == 0) {
    PROFSH_SAMPLE_POINT();
    return g_sink;
  }
  int r = Recurse(depth - 1);
  __asm__ volatile("" ::: "memory");
  return r + depth;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int depth = argc > 1 ? std::atoi(argv[1]) : 32;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 100000;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("profsh-unwind-bench-" + std::to_string(getpid())))
          .string();
  profsh_capture_install(path.c_str());
  Recurse(depth);
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::filesystem::remove(path);
  const std::string bytes = buffer.str();
  StackSnapshot snapshot;
  uint64_t stack_size = 0, maps_size = 0;
  size_t at = 8;
  if (bytes.size() < 8 + sizeof snapshot.regs + 16) return 1;
  std::memcpy(snapshot.regs.data(), bytes.data() + at, sizeof snapshot.regs);
  at += sizeof snapshot.regs;
  std::memcpy(&snapshot.regs_mask, bytes.data() + at, 8);
  std::memcpy(&stack_size, bytes.data() + at + 8, 8);
  at += 16;
  const std::vector<uint8_t> stack(bytes.begin() + at, bytes.begin() + at + stack_size);
  at += stack_size;
  std::memcpy(&maps_size, bytes.data() + at, 8);
  const std::string maps = bytes.substr(at + 8, maps_size);
  snapshot.stack = stack;
  auto space = AddressSpace::FromProcMaps(maps, "own maps");
  if (!space.ok()) {
    std::fprintf(stderr, "%s\n", space.error().message.c_str());
    return 1;
  }
  Unwinder unwinder;
  std::vector<UnwoundFrame> frames = unwinder.Unwind(space.value(), snapshot);
  std::vector<double> per_sample_us;
  for (int run = 0; run < runs; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    size_t total = 0;
    for (int i = 0; i < iterations; ++i) total += unwinder.Unwind(space.value(), snapshot).size();
    const auto t1 = std::chrono::steady_clock::now();
    if (total != frames.size() * iterations) return 1;
    per_sample_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() /
                            iterations);
  }
  Symbolizer symbolizer;
  const auto s0 = std::chrono::steady_clock::now();
  size_t named = 0;
  for (const UnwoundFrame& f : frames)
    named += symbolizer.Symbolize(space.value(), f.pc, f.is_return_address).size();
  const auto s1 = std::chrono::steady_clock::now();
  for (const UnwoundFrame& f : frames)
    symbolizer.Symbolize(space.value(), f.pc, f.is_return_address);
  const auto s2 = std::chrono::steady_clock::now();
  std::printf("stack copy %zu bytes, %zu frames (truncated walks %llu)\n", stack.size(),
              frames.size(), static_cast<unsigned long long>(unwinder.stats().truncated));
  std::printf(
      "unwind (DWARF CFI) median of %d x %d: %.2f us/sample = %.0f samples/s, %.0f ns/frame\n",
      runs, iterations, Median(per_sample_us), 1e6 / Median(per_sample_us),
      1000 * Median(per_sample_us) / frames.size());
  std::printf("symbolise the %zu frames: cold %.2f ms (opening the files), warm %.2f us\n", named,
              std::chrono::duration<double, std::milli>(s1 - s0).count(),
              std::chrono::duration<double, std::micro>(s2 - s1).count());
  return 0;
}
