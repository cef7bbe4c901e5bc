// A compact summary of one step of a flight recording: what the host keeps about every step
// (far less than the step's events) and what triggers look at. Computed once per step from the
// step's trace, through the event model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

// A name and the time spent in it during the step (inclusive, summed over its calls).
struct NamedTime {
  std::string name;
  int64_t total_ns = 0;
  uint64_t count = 0;
};

// A sampled function and the samples (weights) with it innermost.
struct NamedSamples {
  std::string name;
  uint64_t samples = 0;
};

struct StepSummary {
  int64_t pid = 0;
  int64_t step = 0;
  int64_t begin_ns = 0, end_ns = 0;  // absolute (ns since the epoch)
  int64_t duration_ns = 0;
  // Device work: the union of kernels, copies, sets and syncs in the step, and the rest.
  bool has_gpu = false;
  int64_t gpu_busy_ns = 0, gpu_idle_ns = 0;
  double gpu_idle_fraction = 0;  // gpu_idle_ns / duration_ns; 0 without device work
  // Every annotated range name (NVTX, ITT, record_function) with its time, the longest first;
  // the operators' ten longest.
  std::vector<NamedTime> ranges;
  std::vector<NamedTime> top_operators;
  // Memory the collector saw allocated and not freed: at the step's start (every earlier
  // step's growth), its peak within the step, and its net change.
  bool has_memory = false;
  int64_t memory_at_start = 0, memory_peak = 0, memory_growth = 0;
  uint64_t dropped = 0;                     // events the collector dropped while this step was read
  uint64_t events = 0;                      // events the step's trace holds
  std::vector<NamedSamples> top_functions;  // CPU samples, the five most sampled first

  int64_t memory_at_end() const { return memory_at_start + memory_growth; }
  // The step's total time in ranges named `name` (0 when none ran).
  int64_t RangeTime(const std::string& name) const;
};

inline constexpr size_t kStepTopOperators = 10;
inline constexpr size_t kStepTopFunctions = 5;

// The summary of `trace`, one step of process `pid` spanning [begin_ns, end_ns); memory starts
// from `memory_at_start` (the process's running total before the step).
StepSummary SummarizeStep(const Trace& trace, int64_t pid, int64_t step, int64_t begin_ns,
                          int64_t end_ns, int64_t memory_at_start);

}  // namespace profsh
