// The allocations and frees a trace records: torch's profile_memory and profsh's collector write
// each as a "[memory]" instant with its size ("Bytes", negative for a free) and where the memory
// lives ("Device Type", "Device Id").
#pragma once

#include <cstdint>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

struct MemoryRecord {
  uint32_t event;
  int64_t bytes;
  int64_t device_type = 0;  // c10::DeviceType: 0 CPU, 1 CUDA, ...; 0 when not written
  int64_t device_id = 0;    // 0 when not written
};

// In trace order; a record without a numeric size is left out.
std::vector<MemoryRecord> MemoryRecordsOf(const Trace& trace);

}  // namespace profsh
