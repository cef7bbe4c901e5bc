// The builder of FunctionEvents, shared by its passes, one file each, which Build (build.cpp)
// runs in this order. Roles, ids and launch links come from the event model (ModelOf); nesting
// stays torch's own (_populate_cpu_children asks a parent to contain its child, which the model's
// range tree does not, and runtime calls nest on their op's thread).
//   schema_constants    names, input values and stacks, once per name or argument schema
//   classify_templates  what each template is to the view, from the model's role of it
//   scan_events         the columns, in parallel parts over the events
//   link_device_work    device work to its op and runtime call: the model's first candidate
//                       that is in the view
//   attribute_memory    memory records to the ops around them
//   nesting             torch's order per thread and the parent of every CPU event
//   backward            backward functions (and, after merging, backward ops' stacks)
//   attach_device_work  device time to the launching ops
//   merge               lone same-name children into their parents
//   sums                children's times, memory, device and tensor-core time (tensor_cores)
//                       summed into their parents
//   torch2_float_times  torch 2.x's float times
// The columns are FunctionEvents' own, built in place, one entry per candidate event.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/analysis/function_events.h"
#include "engine/analysis/model/event_model.h"
#include "engine/analysis/model/operator_args.h"
#include "engine/trace/trace.h"
#include "engine/util/large_vector.h"

namespace profsh {

class FunctionEventsBuilder {
 public:
  FunctionEventsBuilder(const Trace& trace, const IttSelection& itt)
      : trace_(trace),
        model_(ModelOf(trace)),
        args_(trace),
        itt_(itt),
        out_(std::make_unique<FunctionEvents>()),
        f_(*out_) {}

  std::unique_ptr<FunctionEvents> Build();

 private:
  // What the events of a template are to the view, from the model's role of the template: events
  // of a template share their name, track, category and argument schema.
  struct TemplateInfo {
    bool joins = false;  // a row's event: an op, range, runtime call, device work or GPU span
    bool memory = false, out_of_memory = false;  // a [memory] or [OutOfMemory] record
    uint8_t flags = 0;
    uint32_t name = 0;  // display name
    uint32_t track = 0;
    bool has_args = false;
    uint32_t inputs = 0, stack = 0;  // an input set of FunctionEvents, a stack id
  };
  struct MemoryRecord {
    int64_t ts;
    int64_t cpu_bytes, cuda_bytes;
    uint32_t track;
    bool oom;
  };

  // classify_templates.cpp
  void ClassifyTemplates();
  bool IttTaskJoins(uint32_t schema_plus_one);
  // schema_constants.cpp
  uint32_t NameOf(uint32_t trace_name, bool* filtered);
  void ResolveSchemaConstants();
  // scan_events.cpp
  void ScanEvents();
  // link_device_work.cpp
  void LinkDeviceWork();
  std::vector<int32_t> CandidatesOf(const std::vector<uint32_t>& events) const;
  // attribute_memory.cpp
  void AttributeMemory();
  void AppendLone(const MemoryRecord& r, uint32_t name);
  // nesting.cpp
  void Order();
  void Nest();
  // backward.cpp
  void MarkBackwardFunctions();
  void AssignBackwardStacks();
  // attach_device_work.cpp
  void AttachDeviceWork();
  bool AnyDeviceAnnotation() const;
  void AttachDeviceAnnotations();
  // merge.cpp
  void MergeLoneSameNameChildren();
  // sums.cpp
  void RemoveMergedAndSum();
  // tensor_cores.cpp (tc_ns_ is filled by AttachDeviceWork, carried by merging, summed by sums)
  bool UsesTensorCores(uint32_t device_candidate);
  bool EligibleOnItsOwn(uint32_t c);
  // torch2_float_times.cpp
  void TorchFloatTimes();
  // build.cpp
  void SetTableFlags();

  double FloatUs(int64_t ns) const { return static_cast<double>(ns - trace_start_ns_) / 1000.0; }
  // The name as recorded (names_ has ProfilerStep* where the trace has ProfilerStep#N).
  uint32_t RecordedName(uint32_t c) const {
    return c < candidate_events_.size() ? recorded_map_[trace_.events.name(candidate_events_[c])]
                                        : f_.name_[c];
  }

  const Trace& trace_;
  const EventModel& model_;  // roles, ids and launch links
  OperatorArgs args_;        // the operators' arguments the model does not type
  IttSelection itt_;         // kAuto resolved in ClassifyTemplates
  std::unique_ptr<FunctionEvents> out_;
  FunctionEvents& f_;
  bool want_inputs_ = false, want_stacks_ = false, want_flops_ = false;
  int64_t trace_start_ns_ = 0;  // torch 2.x's float times count from it

  std::vector<TemplateInfo> info_;  // per event template
  std::vector<uint8_t> itt_left_out_;
  bool any_itt_left_out_ = false;
  std::vector<uint32_t> name_map_;  // trace name id -> display name id + 1; 0 unknown
  std::vector<uint32_t> recorded_map_;
  std::vector<uint32_t> schema_inputs_, schema_stack_;  // per argument schema

  // Per candidate, besides the output columns.
  LargeVector<uint32_t> candidate_events_;  // the trace event (lone memory records have none)
  // Nesting group when it is not the track: runtime calls moved to their op's thread. Empty when
  // none moved.
  LargeVector<uint32_t> thread_;
  LargeVector<int64_t> seq_;  // only with stacks
  std::vector<MemoryRecord> memory_;
  std::vector<uint32_t> links_;  // candidate: device work (kernels, copies, sets) in trace order
  std::vector<int32_t> range_candidate_;  // per model range (EventIds::ranges): its candidate or -1
  std::vector<int32_t> link_op_;          // candidate: the op named by the link's External id
  std::vector<int32_t> runtime_of_link_;  // candidate: the runtime call with the link's correlation

  // Candidates grouped by thread, (start, -end) within.
  LargeVector<uint32_t> order_;
  std::vector<std::pair<uint32_t, uint32_t>> segments_;  // [begin, end) in order_ per thread
  LargeVector<uint8_t> child_count_;  // saturates at 255; only "exactly one" matters
  LargeVector<int64_t> kernel_ns_;
  LargeVector<double> kernel_us_;  // torch 2.x's float sum of the kernels' durations
  LargeVector<int64_t> tc_ns_;     // the part of kernel_ns_ in tensor-core kernels; empty: none
  // Per name id: 1 yes, 0 no, -1 not looked up yet.
  std::vector<int8_t> tensor_core_name_;  // a kernel using tensor cores
  std::vector<int8_t> eligible_name_;     // an operator on the plugin's list
  LargeVector<uint8_t> backward_;
  LargeVector<uint8_t> removed_;
  bool any_removed_ = false;
};

}  // namespace profsh
