// A trace's memory over time: every allocation and free ("[memory]" events, from torch's
// profile_memory or profsh's collector) in time order, with its process's running total, each
// process's peak and what it still held at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

struct MemoryPoint {
  int64_t ts;     // ns, trace time
  int64_t bytes;  // > 0 allocated, < 0 freed
  int64_t total;  // the process's running total after this point
  uint32_t track;
};

struct ProcessMemory {
  std::string pid;  // as Trace::FormatIdent writes it
  int64_t peak = 0, peak_ts = 0, at_end = 0;
};

struct MemoryTimeline {
  std::vector<MemoryPoint> points;
  std::vector<ProcessMemory> processes;  // ordered by pid text
  int64_t peak = 0;                      // the processes' peaks, summed
  int64_t at_end = 0;                    // the processes' bytes at the end, summed
};

MemoryTimeline BuildMemoryTimeline(const Trace& trace);

}  // namespace profsh
