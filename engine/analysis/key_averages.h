// torch's EventList.key_averages(): FunctionEvents grouped by name (and optionally input shapes
// and the top of the stack), with every FunctionEventAvg field.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

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
  uint32_t input_shapes = 0;    // repr string id of the first event's shapes; 0 means []
  std::vector<uint32_t> stack;  // first event's stack, cut to group_by_stack_n frames
  DeviceType device = DeviceType::kCpu;
  EventKind kind = EventKind::kCpuOp;  // the first event's
  bool is_user_annotation = false;
  bool has_parent = false;  // the first event had a CPU parent (top_level_events_only)

  double cpu_time_us() const {
    return count == 0
               ? 0.0
               : (static_cast<double>(cpu_time_total_ns) / 1000.0) / static_cast<double>(count);
  }
  double cuda_time_us() const {
    return count == 0
               ? 0.0
               : (static_cast<double>(cuda_time_total_ns) / 1000.0) / static_cast<double>(count);
  }
};

struct KeyAverages {
  std::vector<AverageRow> rows;  // in order of first occurrence, as torch's dict keeps them
  bool group_by_input_shape = false;
  int group_by_stack_n = 0;
  bool profile_memory = false;
  bool with_flops = false;
  std::shared_ptr<const FunctionEvents> events;
};

KeyAverages ComputeKeyAverages(std::shared_ptr<const FunctionEvents> events,
                               bool group_by_input_shape, int group_by_stack_n);

}  // namespace profsh
