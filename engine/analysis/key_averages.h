// torch's EventList.key_averages(): FunctionEvents grouped by name (and optionally input shapes
// and the top of the stack), with every FunctionEventAvg field.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/analysis/cpu_samples.h"
#include "engine/analysis/function_events.h"

namespace profsh {

struct AverageRow {
  uint32_t key = 0;  // string id of the (rewritten) name
  int64_t count = 0;
  int64_t cpu_time_total_ns = 0;
  int64_t cuda_time_total_ns = 0;
  int64_t self_cpu_time_total_ns = 0;
  int64_t self_cuda_time_total_ns = 0;
  int64_t cpu_memory_usage = 0;
  int64_t cuda_memory_usage = 0;
  int64_t self_cpu_memory_usage = 0;
  int64_t self_cuda_memory_usage = 0;
  int64_t flops = 0;
  // Activity cpu: samples taken while an event of the row was the innermost open on its
  // thread (self) or open at all (total); 0 without samples.
  int64_t self_cpu_samples = 0;
  int64_t cpu_samples = 0;
  // Tensor cores as the TensorBoard plugin's operator view counts them (docs/ANALYSIS.md,
  // "Tensor cores on key_averages rows"): the events' tensor-core kernel time, of their own
  // device time and of their total, and whether the first event is eligible, as the plugin
  // takes a row's eligibility from its first operator.
  int64_t tc_self_ns = 0, tc_total_ns = 0;
  bool tc_eligible = false;
  // The time sums in microseconds as torch's FunctionEventAvg holds them: exact for 1.13's
  // traces, torch 2.x's float sums in its event order for 2.x's (FunctionEvents::cpu_total_us).
  double cpu_time_total_us = 0, self_cpu_time_total_us = 0;
  double cuda_time_total_us = 0, self_cuda_time_total_us = 0;
  // The first event's inputs, grouped by shape (value ids in events->inputs; 0 means []).
  uint32_t input_shapes = 0, input_types = 0, concrete_inputs = 0;
  std::vector<uint32_t> stack;  // first event's stack, cut to group_by_stack_n frames
  DeviceType device = DeviceType::kCpu;
  EventKind kind = EventKind::kCpuOp;  // the first event's
  bool is_user_annotation = false;
  bool has_parent = false;  // the first event had a CPU parent (top_level_events_only)

  double cpu_time_us() const {
    return count == 0 ? 0.0 : cpu_time_total_us / static_cast<double>(count);
  }
  double cuda_time_us() const {
    return count == 0 ? 0.0 : cuda_time_total_us / static_cast<double>(count);
  }
  // The plugin's "Tensor Cores Self(%)" and "Tensor Cores Total(%)": percent of the self (total)
  // device time in tensor-core kernels, 0 without device time.
  double tc_self_pct() const { return TensorCorePercent(tc_self_ns, self_cuda_time_total_ns); }
  double tc_total_pct() const { return TensorCorePercent(tc_total_ns, cuda_time_total_ns); }
  static double TensorCorePercent(int64_t tc_ns, int64_t device_ns) {
    return device_ns > 0 ? 100.0 * static_cast<double>(tc_ns) / static_cast<double>(device_ns)
                         : 0.0;
  }
};

struct KeyAverages {
  std::vector<AverageRow> rows;  // in order of first occurrence, as torch's dict keeps them
  bool group_by_input_shape = false;
  int group_by_stack_n = 0;
  bool profile_memory = false;
  bool with_flops = false;
  bool has_samples = false;  // the rows carry CPU sample counts
  // Whose grouping made the rows and, unless table() says otherwise, whose table prints them.
  TorchFormat torch_format = TorchFormat::k113;
  std::shared_ptr<const FunctionEvents> events;
};

// `torch_format` overrides the trace's own (FunctionEvents::torch_format). torch 2.x also keys
// rows by is_user_annotation, so a user range and an operator of the same name stay apart.
KeyAverages ComputeKeyAverages(std::shared_ptr<const FunctionEvents> events,
                               bool group_by_input_shape, int group_by_stack_n,
                               std::optional<TorchFormat> torch_format = std::nullopt,
                               const EventSampleCounts* samples = nullptr);

}  // namespace profsh
