// The operator view of a trace, as torch.autograd.profiler builds it (FunctionEvent in
// torch/autograd/profiler_util.py of PyTorch 1.13), so that key_averages() and its table give the
// same numbers: CPU ranges nested per thread by interval containment, lone same-name children
// merged into their parent, device kernels attached to the CPU op that launched them, memory
// records attributed to the ops whose interval contains them, and backward ops given the stack of
// their forward op.
//
// Which trace events take part (docs/ANALYSIS.md):
//   CPU ops : complete ('X') events of any category except device, flow, span and sync ones
//   device  : categories kernel, gpu_memcpy, gpu_memset; gpu_user_annotation is listed but not
//             counted in the device total, as newer PyTorch does
//   memory  : instant events named "[memory]" (args "Bytes", "Device Type")
//
// Storage is columnar, events grouped by thread and, within a thread, in torch's (start, -end)
// order. torch orders the whole list that way, but everything it derives from the order is
// per thread (nesting, merging) or a first occurrence, which a rank per event preserves, so no
// global sort is needed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/event_kind.h"
#include "engine/analysis/function_events/input_values.h"
#include "engine/analysis/function_events/stack_table.h"
#include "engine/trace/trace.h"
#include "engine/util/large_vector.h"
#include "engine/util/string_pool.h"

namespace profsh {

enum class DeviceType : uint8_t { kCpu = 0, kCuda = 1 };

// Which torch's key_averages()/table() a trace is read and printed like (docs/ANALYSIS.md, "torch
// 1.13 and 2.x"). A trace is torch 2.x's when some event carries an argument that only torch 2.x
// writes ("Record function id", "Concrete Inputs", "Input Strides"); 1.13's otherwise.
enum class TorchFormat : uint8_t { k113, k2 };

// Which ITT tasks join the operator view (its rows and its nesting). oneDNN and other libraries
// report their work as ITT tasks ("convolution", "reorder" in domain dnnl::primitive::execute)
// inside torch's operators; as rows of the operator tree they would take the operators' self
// time (aten::mkldnn_convolution 0.63 % of self CPU where torch.profiler shows 9.33 %), and
// torch.profiler never shows them. So by default a trace with PyTorch operators (category
// cpu_op) keeps only the ITT tasks of torch's own domain, "PyTorch" (torch.profiler.itt's
// ranges, emit_itt: what the user asked torch to mark), and a trace without operators (an
// ITT-only workload) keeps them all. The trace itself keeps every task (events, exports).
struct IttSelection {
  enum class Mode : uint8_t { kAuto, kAll, kNone, kDomains };
  Mode mode = Mode::kAuto;
  std::vector<std::string> domains;  // kDomains: the domains whose tasks join
  bool operator==(const IttSelection&) const = default;
};

class FunctionEvents {
 public:
  // Flags of an event. kind(): kCopy and kSet tell device work apart, kUserRange is a CPU
  // user_annotation range, kLoneMemory a memory record no op held.
  static constexpr uint8_t kDevice = 1, kAnnotation = 2, kRuntime = 4, kRemoved = 8, kCopy = 16,
                           kSet = 32, kUserRange = 64, kLoneMemory = 128;

  // Events merged into their parent stay in the columns, marked removed; skip them.
  size_t size() const { return start_.size(); }
  bool removed(size_t i) const { return flags_[i] & kRemoved; }

  uint32_t name(size_t i) const { return name_[i]; }  // strings id; ProfilerStep#N is ProfilerStep*
  int64_t start_ns(size_t i) const { return start_[i]; }
  int64_t end_ns(size_t i) const { return end_[i]; }
  DeviceType device(size_t i) const {
    return (flags_[i] & kDevice) ? DeviceType::kCuda : DeviceType::kCpu;
  }
  bool is_user_annotation(size_t i) const { return flags_[i] & kAnnotation; }
  EventKind kind(size_t i) const {
    const uint8_t f = flags_[i];
    if (f & kAnnotation) return EventKind::kAnnotation;
    if (f & kDevice)
      return (f & kCopy) ? EventKind::kCopy : (f & kSet) ? EventKind::kSet : EventKind::kKernel;
    if (f & kRuntime) return EventKind::kRuntime;
    if (f & kUserRange) return EventKind::kAnnotation;
    if (f & kLoneMemory) return EventKind::kMemory;
    return EventKind::kCpuOp;
  }
  int32_t parent(size_t i) const { return parent_[i]; }
  uint32_t track(size_t i) const { return track_[i]; }  // the trace track the event is on
  // Events are stored in torch's input order (the trace's order, lone memory records after), so
  // the index itself breaks ties the way torch's stable sort does.
  size_t rank(size_t i) const { return i; }
  // An operator's recorded inputs ("Input Dims", "Input type", "Concrete Inputs"), as value ids
  // in `inputs`; 0, the empty list, where the trace has none.
  uint32_t input_shapes(size_t i) const { return input_set(i).shapes; }
  uint32_t input_types(size_t i) const { return input_set(i).types; }
  uint32_t concrete_inputs(size_t i) const { return input_set(i).concrete; }
  uint32_t stack(size_t i) const { return stack_.empty() ? 0 : stack_[i]; }
  int64_t flops(size_t i) const { return flops_.empty() ? 0 : flops_[i]; }

  int64_t cpu_total_ns(size_t i) const {
    return device(i) == DeviceType::kCpu ? end_[i] - start_[i] : 0;
  }
  int64_t self_cpu_ns(size_t i) const {
    return device(i) == DeviceType::kCpu ? end_[i] - start_[i] - children_cpu_[i] : 0;
  }
  int64_t cuda_total_ns(size_t i) const {
    if (device(i) == DeviceType::kCuda) return end_[i] - start_[i];
    return cuda_total_.empty() ? 0 : cuda_total_[i];
  }
  int64_t self_cuda_ns(size_t i) const {
    if (device(i) == DeviceType::kCuda) return end_[i] - start_[i];
    return self_cuda_.empty() ? 0 : self_cuda_[i];
  }
  // Tensor cores as the TensorBoard plugin sees them (docs/ANALYSIS.md, "Tensor cores on
  // key_averages rows"): the part of self_cuda_ns and cuda_total_ns spent in kernels whose name
  // holds one of its tensor-core patterns (a kernel's own: all or nothing), and whether the event
  // is eligible for tensor cores (its name is on the plugin's operator list, it launched such a
  // kernel, or an event inside it is eligible).
  int64_t tc_self_ns(size_t i) const { return tc_self_.empty() ? 0 : tc_self_[i]; }
  int64_t tc_total_ns(size_t i) const { return tc_total_.empty() ? 0 : tc_total_[i]; }
  bool tc_eligible(size_t i) const { return !tc_eligible_.empty() && tc_eligible_[i]; }
  // The times as torch's FunctionEvents hold them, in microseconds. torch 2.x keeps each time
  // as a float, (t - trace start) / 1000, and takes differences and sums of those floats, so its
  // table's last digit can differ from the exact nanosecond arithmetic; on a 2.x trace these
  // are those floats. 1.13 keeps whole microseconds, which the exact values are.
  double cpu_total_us(size_t i) const {
    return float_cpu_total_.empty() ? cpu_total_ns(i) / 1000.0 : float_cpu_total_[i];
  }
  double self_cpu_us(size_t i) const {
    return float_self_cpu_.empty() ? self_cpu_ns(i) / 1000.0 : float_self_cpu_[i];
  }
  double cuda_total_us(size_t i) const {
    return float_cuda_total_.empty() ? cuda_total_ns(i) / 1000.0 : float_cuda_total_[i];
  }
  double self_cuda_us(size_t i) const {
    return float_self_cuda_.empty() ? self_cuda_ns(i) / 1000.0 : float_self_cuda_[i];
  }
  bool has_float_times() const { return !float_cpu_total_.empty(); }
  int64_t cpu_memory(size_t i) const { return cpu_memory_.empty() ? 0 : cpu_memory_[i]; }
  int64_t cuda_memory(size_t i) const { return cuda_memory_.empty() ? 0 : cuda_memory_[i]; }
  // (CUDA memory columns exist only when some record was on a CUDA device.)
  int64_t self_cpu_memory(size_t i) const {
    if (cpu_memory_.empty() || device(i) != DeviceType::kCpu) return 0;
    return cpu_memory_[i] - children_cpu_memory_[i];
  }
  int64_t self_cuda_memory(size_t i) const {
    if (cuda_memory_.empty() || device(i) != DeviceType::kCpu) return 0;
    return cuda_memory_[i] - children_cuda_memory_[i];
  }

  // The trace event an event came from (none for a lone memory record's row).
  std::optional<uint32_t> trace_event(size_t i) const {
    if (i >= trace_event_.size()) return std::nullopt;
    return trace_event_[i];
  }
  // Device work (kernels, copies, sets) and what launched it: the CPU op (by the work's
  // External id in newer Kineto, or as the parent of the runtime call with its correlation in
  // older Kineto) and that runtime call; -1 where unknown. In the order of the device events.
  struct Launch {
    uint32_t device;
    int32_t op;
    int32_t runtime;
  };
  std::vector<Launch> launches;

  StringPool strings;      // names and frames the events refer to
  InputValueTable inputs;  // shapes, dtypes and concrete inputs, as typed values
  StackTable stacks;
  bool profile_memory = false;  // the trace recorded memory (metadata, or any [memory] event)
  bool with_flops = false;
  size_t memory_records = 0;
  // What the device columns are named after: "CUDA" (also ROCm, as torch names it), "MTIA",
  // "XPU", "PRIVATEUSE1", from the trace's runtime and device categories.
  std::string device_name = "CUDA";
  // Detected from the trace; it decides how memory records meet ops (2.x: nanoseconds, 1.13:
  // whole microseconds) and is the default format of key_averages() and table().
  TorchFormat torch_format = TorchFormat::k113;
  // ITT tasks the selection left out of the view, and their domains (sorted, each once).
  uint64_t itt_tasks_left_out = 0;
  std::vector<std::string> itt_domains_left_out;

 private:
  friend class FunctionEventsBuilder;

  // The values of one operator's inputs; events hold the id of their set (0: none recorded).
  struct InputSet {
    uint32_t shapes = 0, types = 0, concrete = 0;
    bool operator==(const InputSet&) const = default;
  };
  const InputSet& input_set(size_t i) const {
    return input_set_.empty() ? input_sets_[0] : input_sets_[input_set_[i]];
  }
  std::vector<InputSet> input_sets_ = std::vector<InputSet>(1);

  LargeVector<uint32_t> trace_event_;
  LargeVector<int64_t> start_, end_;
  LargeVector<uint32_t> name_;
  LargeVector<uint8_t> flags_;
  LargeVector<int32_t> parent_;
  LargeVector<uint32_t> track_;
  LargeVector<int64_t> children_cpu_;
  // Empty when the trace has nothing of the kind.
  LargeVector<uint32_t> input_set_, stack_;
  LargeVector<int64_t> flops_;
  LargeVector<int64_t> cuda_total_, self_cuda_;  // self CUDA is the op's own device work
  // Empty when no kernel uses tensor cores (tc_*) or no event is eligible (tc_eligible_).
  LargeVector<int64_t> tc_self_, tc_total_;
  LargeVector<uint8_t> tc_eligible_;
  LargeVector<int64_t> cpu_memory_, cuda_memory_, children_cpu_memory_, children_cuda_memory_;
  LargeVector<double> float_cpu_total_, float_self_cpu_, float_cuda_total_, float_self_cuda_;
};

// Builds the operator view; the trace is only read.
std::unique_ptr<FunctionEvents> BuildFunctionEvents(const Trace& trace,
                                                    const IttSelection& itt = {});

}  // namespace profsh
