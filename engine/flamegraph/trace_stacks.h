// Folded stacks from a trace, to draw it as a flamegraph: either the Python stacks the profiler
// recorded (with_stack; what torch's export_stacks writes) or the nesting of the operators and
// ranges themselves, which every trace has.
#pragma once

#include <string>

#include "engine/analysis/function_events.h"
#include "engine/flamegraph/folded_stacks.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

// kSamples: the cpu activity's sampled native stacks, one count per sample.
enum class StackSource { kAuto, kPython, kOperators, kSamples };

// How a thread's root frame is named. With its pid it is unique in one trace; by name (and the
// process's rank or labels) it matches the same thread of another run, whose pids differ.
enum class ThreadFrames { kNameAndPid, kName };

struct TraceStackOptions {
  std::string metric =
      "self_cpu_time_total";  // also self_cuda_time_total, self_cpu_memory_usage, count
  StackSource source = StackSource::kAuto;  // auto: Python stacks when the trace has them
  int threads = -1;                         // operators: a root frame per thread (-1: when several)
  ThreadFrames thread_frames = ThreadFrames::kNameAndPid;
  bool under_ranges = false;  // samples: each stack under the ranges open at the sample
  std::string range;          // samples: only those taken inside a range of this name
};

// The unit of a metric's values, for flamegraph labels ("us", "bytes", "calls").
std::string MetricUnit(const std::string& metric);

// An empty result (no event with a positive value) is not an error here.
Result<FoldedStacks> TraceStacks(const Trace& trace, const FunctionEvents& events,
                                 const TraceStackOptions& options);

// Whether profsh can load `path` as a trace (decided from its content, as profsh.load does).
bool IsTraceFile(const std::string& path);

// The stacks of a file: a trace profsh can load (drawn as `options` say), or else a folded-stack
// file. Errors name the file; a trace without a positive value of the metric is one.
Result<FoldedStacks> StacksFromFile(const std::string& path, const TraceStackOptions& options);

}  // namespace profsh
