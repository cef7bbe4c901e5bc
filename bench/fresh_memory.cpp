// Prints what touching memory costs on this machine: pages the process maps for the first time
// against the same amount mapped again after it was given back. On a VM whose host supplies
// guest pages on first use, the first figure is what the first analysis in a process pays for
// its columns (key_averages_bench's "first run").
//
//   fresh_memory [MEGABYTES=1024] [ROUNDS=3]
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

// Maps `bytes` like the engine's large columns (huge pages where the kernel gives them), writes
// one byte per 4 KiB page, unmaps; returns the seconds the writing took.
double TouchOnce(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  auto start = std::chrono::steady_clock::now();
  volatile char* c = static_cast<char*>(p);
  for (size_t i = 0; i < bytes; i += 4096) c[i] = 1;
  auto end = std::chrono::steady_clock::now();
  munmap(p, bytes);
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const size_t megabytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const size_t bytes = megabytes << 20;
  for (int r = 0; r < rounds; ++r) {
    double s = TouchOnce(bytes);
    std::printf("round %d: %zu MB touched in %.3f s = %.0f MB/s%s\n", r + 1, megabytes, s,
                static_cast<double>(megabytes) / s,
                r == 0 ? " (pages new to this process)" : " (pages the last round gave back)");
  }
  return 0;
}
