// A trace's memory over time: every allocation and free ("[memory]" events, from torch's
// profile_memory or profsh's collector) in time order, with the running total of its process on
// its device, each process's peak there and what it still held at the end. Host memory (torch's
// CPU, MKLDNN and IDEEP device types) and each GPU's memory are counted apart, as torch's memory
// profile does; a sum of the two would be a number of no device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

struct MemoryPoint {
  int64_t ts;     // ns, trace time
  int64_t bytes;  // > 0 allocated, < 0 freed
  int64_t total;  // the process's running total on the device after this point
  uint32_t track;
  uint32_t device;  // index into MemoryTimeline::devices
};

struct ProcessMemory {
  std::string pid;     // as Trace::FormatIdent writes it
  std::string device;  // "cpu", "cuda:0", ...
  int64_t peak = 0, peak_ts = 0, at_end = 0;
};

struct MemoryTimeline {
  std::vector<MemoryPoint> points;
  std::vector<std::string> devices;      // names of the devices the points refer to
  std::vector<ProcessMemory> processes;  // per process and device, ordered by pid, then device
  int64_t peak = 0;                      // host memory: the processes' peaks, summed
  int64_t at_end = 0;                    // host memory: the processes' bytes at the end, summed
};

// The name torch's device type and index stand for: "cpu" for host memory, "cuda:N", "hip:N", or
// "device<type>:N" for other kinds.
std::string MemoryDeviceName(int64_t device_type, int64_t device_id);

MemoryTimeline BuildMemoryTimeline(const Trace& trace);

}  // namespace profsh
