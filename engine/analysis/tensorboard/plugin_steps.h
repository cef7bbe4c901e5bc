// The plugin's steps and the time of each category in them (torch_tb_profiler, kineto 041e7ce:
// event_parser.py's StepParser, overall_parser.py). The overview's step breakdown, the GPU
// summary (over the steps' span) and the distributed view all start from these.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/analysis/gpu_intervals.h"
#include "engine/analysis/tensorboard/plugin_events.h"

namespace profsh {

// The categories in the plugin's priority order (ProfileRole): a moment of a step counts for the
// first category busy then; "other" is what none of them covers.
enum class StepCategory : uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kCommunication,
  kRuntime,
  kDataLoader,
  kCpuExec,
  kCount,
};

struct PluginSteps {
  std::vector<std::string> names;  // "N" of ProfilerStep#N; "0" for the whole trace
  std::vector<Interval> steps;     // ns, widened to their device work, trailing ones dropped
  // Each category's busy time, merged, over the whole trace.
  std::array<std::vector<Interval>, static_cast<size_t>(StepCategory::kCount)> busy;
  bool has_profiler_steps = false;  // false: the one step is the CPU events' span
  bool uses_gpu = false;            // some step launched device work: steps follow the device
  size_t dropped_steps = 0;         // trailing steps dropped (their device work seems cut off)

  const std::vector<Interval>& of(StepCategory c) const { return busy[static_cast<size_t>(c)]; }
  bool has(StepCategory c) const { return !of(c).empty(); }
  bool empty() const { return steps.empty(); }
  // From the first step's start to the last one's end (gpu_metrics_parser's span).
  int64_t span_begin() const { return steps.front().ts; }
  int64_t span_end() const { return steps.back().end; }
};

PluginSteps ComputePluginSteps(const EventModel& model, const PluginEvents& events);

}  // namespace profsh
