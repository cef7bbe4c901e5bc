// The allocations and frees a trace records: torch's profile_memory and profsh's collector write
// each as a "[memory]" instant with its size ("Bytes", negative for a free) and where the memory
// lives ("Device Type", "Device Id"); torch also writes the block's address ("Addr") and its
// allocator's totals after the call ("Total Allocated", "Total Reserved").
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

struct MemoryRecord {
  uint32_t event;
  int64_t bytes;
  int64_t device_type = 0;  // c10::DeviceType: 0 CPU, 1 CUDA, ...; 0 when not written
  int64_t device_id = 0;    // 0 when not written
  bool has_addr = false;    // torch before 1.10 writes no address
  int64_t addr = 0;         // the bit pattern of an unsigned address
  double total_allocated = std::numeric_limits<double>::quiet_NaN();  // NaN when not written
  double total_reserved = std::numeric_limits<double>::quiet_NaN();
};

// In trace order; a record without a numeric size is left out.
std::vector<MemoryRecord> MemoryRecordsOf(const Trace& trace);

}  // namespace profsh
