// The operator view of a trace, as torch.autograd.profiler builds it (FunctionEvent in
// torch/autograd/profiler_util.py of PyTorch 1.13), so that key_averages() and its table give the
// same numbers: CPU ranges nested per thread by interval containment, lone same-name children
// merged into their parent, device kernels attached to the CPU op that launched them, memory
// records attributed to the ops whose interval contains them, and backward ops given the stack of
// their forward op.
//
// Which trace events take part (documented in docs/ANALYSIS.md):
//   CPU ops     : complete ('X') events of any category except device, flow, span and sync ones
//   device      : categories kernel, gpu_memcpy, gpu_memset (and gpu_user_annotation, which is
//                 listed but not counted in the device total, as newer PyTorch does)
//   memory      : instant events named "[memory]" (args "Bytes", "Device Type")
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/trace/trace.h"
#include "engine/util/string_pool.h"

namespace profsh {

enum class DeviceType : uint8_t { kCpu = 0, kCuda = 1 };

struct FunctionEvent {
  uint32_t name = 0;            // FunctionEvents::strings id; "ProfilerStep#N" is "ProfilerStep*"
  uint32_t trace_name = 0;      // FunctionEvents::strings id of the name as recorded
  uint32_t event = UINT32_MAX;  // index in the trace's events; UINT32_MAX for a lone [memory]
  uint32_t thread = 0;  // grouping key for nesting (the track; runtime calls follow their op)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  DeviceType device = DeviceType::kCpu;
  bool is_async = false;
  bool is_user_annotation = false;  // a device-side annotation span, not device work
  bool is_backward_function = false;
  uint32_t input_shapes = 0;  // string id of Python's str(shapes); 0 means [] (none recorded)
  uint32_t stack = 0;         // StackTable id; 0 is the empty stack
  int64_t sequence_nr = -1;
  int64_t fwd_thread = 0;
  int64_t cpu_memory = 0;
  int64_t cuda_memory = 0;
  int64_t flops = 0;
  int32_t parent = -1;  // index into FunctionEvents::events
  int32_t child_count = 0;
  int64_t kernel_ns = 0;  // duration of device work launched by this op itself
  // Totals derived once the tree is final.
  int64_t children_cpu_ns = 0;
  int64_t children_cuda_ns = 0;
  int64_t children_cpu_memory = 0;
  int64_t children_cuda_memory = 0;
  int64_t cuda_total_ns = 0;

  int64_t cpu_total_ns() const { return device == DeviceType::kCpu ? end_ns - start_ns : 0; }
  int64_t self_cpu_ns() const {
    return (is_async || device != DeviceType::kCpu) ? 0 : cpu_total_ns() - children_cpu_ns;
  }
  int64_t self_cuda_ns() const {
    if (is_async) return 0;
    return device == DeviceType::kCpu ? cuda_total_ns - children_cuda_ns : cuda_total_ns;
  }
  int64_t self_cpu_memory() const {
    return (is_async || device != DeviceType::kCpu) ? 0 : cpu_memory - children_cpu_memory;
  }
  int64_t self_cuda_memory() const {
    return (is_async || device != DeviceType::kCpu) ? 0 : cuda_memory - children_cuda_memory;
  }
};

// Interned call stacks: lists of frame string ids, innermost frame first (torch's order).
class StackTable {
 public:
  StackTable() { stacks_.emplace_back(); }
  uint32_t Intern(const std::vector<uint32_t>& frames);
  const std::vector<uint32_t>& Get(uint32_t id) const { return stacks_[id]; }
  size_t size() const { return stacks_.size(); }

 private:
  std::vector<std::vector<uint32_t>> stacks_;
  std::vector<uint32_t> slots_ = std::vector<uint32_t>(64, 0);
  void Grow();
};

struct FunctionEvents {
  std::vector<FunctionEvent> events;  // torch's order: by (start, -end), stable
  StringPool strings;                 // every name, shape string and frame the events refer to
  StackTable stacks;
  bool profile_memory = false;  // the trace recorded memory (metadata, or any [memory] event)
  bool with_flops = false;
  size_t memory_records = 0;
};

// Builds the operator view; the trace is only read.
std::unique_ptr<FunctionEvents> BuildFunctionEvents(const Trace& trace);

// Python's str() of a JSON value, as torch prints input shapes: "[[5, 64, 56, 56], []]".
std::string JsonToPythonRepr(std::string_view json);

}  // namespace profsh
