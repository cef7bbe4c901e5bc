// Folded stacks from a trace, to draw it as a flamegraph: either the Python stacks the profiler
// recorded (with_stack; what torch's export_stacks writes) or the nesting of the operators and
// ranges themselves, which every trace has.
#pragma once

#include <string>
#include <string_view>

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

// The root frames of Python-stack graphs under which events without a stack are drawn (with
// their own names below): backward code no forward operator's stack reached, and the rest.
inline constexpr std::string_view kBackwardFrame = "[backward]";
inline constexpr std::string_view kNoStackFrame = "[no Python stack]";

// How a Python-stack graph placed the events (values in the metric's unit): `total` is all of
// them, so the graph adds up to the metric's total.
struct StackCoverage {
  double total = 0;
  size_t inherited_events = 0;  // no stack of their own: drawn under the enclosing operator's
  double inherited = 0;
  size_t backward_events = 0;  // under kBackwardFrame
  double backward = 0;
  size_t unstacked_events = 0;  // under kNoStackFrame
  double unstacked = 0;
};

// An empty result (no event with a positive value) is not an error here. Python stacks fill
// `coverage` when given.
Result<FoldedStacks> TraceStacks(const Trace& trace, const FunctionEvents& events,
                                 const TraceStackOptions& options,
                                 StackCoverage* coverage = nullptr);

// One line for people on what a Python-stack graph drew without a stack ("" when everything had
// one), e.g. "412 backward events (1.52 s, 19.4 %) had no forward stack: under [backward]".
std::string DescribeStackCoverage(const StackCoverage& coverage, const std::string& unit);

// Whether profsh can load `path` as a trace (decided from its content, as profsh.load does).
bool IsTraceFile(const std::string& path);

// The stacks of a file: a trace profsh can load (drawn as `options` say), or else a folded-stack
// file. Errors name the file; a trace without a positive value of the metric is one.
Result<FoldedStacks> StacksFromFile(const std::string& path, const TraceStackOptions& options,
                                    StackCoverage* coverage = nullptr);

}  // namespace profsh
