// Prints how fast profsh imports a trace file and what the result costs in memory.
//
//   import_bench FILE [RUNS]
//
// Each run loads FILE from scratch in this process (the file itself stays in the page cache, as
// it would for a user who just wrote it). Reports every run, the median throughput in MB/s of
// input and millions of events per second, and the resident memory the loaded trace adds.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/load/trace_loader.h"

namespace {

size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [RUNS]\n", argv[0]);
    return 2;
  }
  std::string path = argv[1];
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<double> seconds;
  size_t input_bytes = 0, events = 0, resident_added = 0, strings = 0, string_bytes = 0,
         arena_words = 0;
  for (int r = 0; r < runs; ++r) {
    size_t before = ResidentBytes();
    auto start = std::chrono::steady_clock::now();
    auto trace = profsh::LoadTrace(path);
    auto end = std::chrono::steady_clock::now();
    if (!trace.ok()) {
      std::fprintf(stderr, "%s\n", trace.error().message.c_str());
      return 1;
    }
    seconds.push_back(std::chrono::duration<double>(end - start).count());
    // Later runs reuse memory the allocator kept from earlier ones; the first run tells.
    if (r == 0) resident_added = ResidentBytes() - before;
    auto input = profsh::OpenInput(path);
    input_bytes = input.ok() ? input.value()->FileSize() : 0;
    if (input.ok() && input.value()->compressed()) {
      size_t total = 0;
      std::vector<char> buf(1 << 20);
      while (true) {
        auto n = input.value()->Read(buf.data(), buf.size());
        if (!n.ok() || n.value() == 0) break;
        total += n.value();
      }
      input_bytes = total;  // throughput is measured on the JSON text
    }
    events = trace.value()->events.size();
    strings = trace.value()->strings.size();
    string_bytes = trace.value()->strings.TotalStringBytes();
    arena_words = trace.value()->args.arena_words();
    std::printf("run %d: %.3f s\n", r + 1, seconds.back());
  }
  std::sort(seconds.begin(), seconds.end());
  double median = seconds[seconds.size() / 2];
  double mb = static_cast<double>(input_bytes) / 1e6;
  std::printf("input: %.1f MB of JSON, %zu events (%.0f bytes/event)\n", mb, events,
              static_cast<double>(input_bytes) / static_cast<double>(events));
  std::printf("import: median %.3f s = %.0f MB/s, %.2f M events/s (%d runs)\n", median, mb / median,
              static_cast<double>(events) / median / 1e6, runs);
  std::printf(
      "memory: %.1f bytes/event resident after import (%.1f MB); columns %zu B/event, "
      "inline args %.1f B/event, %zu distinct strings (%.1f MB)\n",
      static_cast<double>(resident_added) / static_cast<double>(events), resident_added / 1e6,
      profsh::EventTable::kBytesPerEvent,
      static_cast<double>(arena_words) * 4 / static_cast<double>(events), strings,
      string_bytes / 1e6);
  return 0;
}
