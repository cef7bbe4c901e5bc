// The TensorBoard profiler plugin's memory view, per device (memory_parser.py and run.py's
// get_memory_curve, get_memory_events and get_memory_stats at kineto 041e7ce): the allocator's
// curve, each allocation with its operator and lifetime, and per-operator statistics. Bytes and
// nanoseconds here; the plugin shows KB and ms. docs/ANALYSIS.md ("TensorBoard views") defines
// each column and where profsh differs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"

namespace profsh::tensorboard {

struct MemoryCurvePoint {
  int64_t ts;                  // ns since the plugin's profiler start
  double allocated, reserved;  // the allocator's "Total Allocated" and "Total Reserved"
};

// An allocation and its free, matched by address; either side may be missing from the trace.
struct MemoryAllocation {
  std::string op;  // the allocating operator, "<parent> (aten::empty...)" for aten::empty*
  int64_t bytes;
  std::optional<int64_t> alloc_ts, free_ts;  // ns since the profiler start
};

struct MemoryOperatorStats {
  std::string name;
  int64_t calls = 0;  // the operator's calls in the whole trace
  // Over the operator's calls: the sum of its records' bytes (allocations less frees), of its
  // allocations' bytes and their count; the self_ ones without its child operators.
  int64_t size_increase = 0, self_size_increase = 0;
  int64_t allocation_count = 0, self_allocation_count = 0;
  int64_t allocation_size = 0, self_allocation_size = 0;
};

struct DeviceMemorySummary {
  std::string device;  // "CPU", "GPU0", ...
  double peak_allocated = 0;
  std::vector<MemoryCurvePoint> curve;         // in time order
  std::vector<MemoryAllocation> allocations;   // in the plugin's order
  std::vector<MemoryOperatorStats> operators;  // by name
};

struct MemorySummary {
  int64_t start_ns = 0;                      // the plugin's profiler start, trace time
  std::vector<DeviceMemorySummary> devices;  // by name
  std::string default_device;                // the first GPU, else "CPU"
  int64_t unattributed_records = 0;          // records under no operator (the plugin's "staled")
};

MemorySummary BuildMemorySummary(const Trace& trace);

// The same as rows: operators (device, name, calls, size_increase, self_size_increase,
// allocation_count, self_allocation_count, allocation_size, self_allocation_size; bytes),
// curve (device, ts, allocated, reserved; µs and bytes), allocations (device, operator, bytes,
// alloc_ts, free_ts, duration; µs, empty when unknown) and devices (device, peak_allocated,
// curve_points, allocations).
struct MemorySummaryRows {
  AnalysisRows operators, curve, allocations, devices;
};
MemorySummaryRows MemorySummaryAsRows(const MemorySummary& summary);

}  // namespace profsh::tensorboard
