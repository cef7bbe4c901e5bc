// The events as the TensorBoard profiler plugin sees them (torch_tb_profiler, kineto 041e7ce,
// profiler/trace.py and event_parser.py): a type per complete event from its category alone,
// the names that make an operator a step, a data-loader range or a collective, and each kernel,
// copy and set tied to the runtime call that launched it. Every TensorBoard view reads the
// trace through this, over the event model.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/analysis/model/event_model.h"

namespace profsh {

// trace.py's EventTypes, of the categories in its EventTypeMap (case-insensitive). Others, and
// events that are not complete ('X') events, are kNone: the plugin leaves them out.
enum class PluginEventType : uint8_t {
  kNone,
  kTrace,           // "Trace"
  kOperator,        // cpu_op, operator
  kUserAnnotation,  // user_annotation, gpu_user_annotation
  kPython,          // python
  kPythonFunction,  // python_function
  kRuntime,         // runtime, cuda_runtime, mtia_, glow_, xpu_, privateuse1_runtime (no driver)
  kKernel,          // kernel
  kMemcpy,          // memcpy, gpu_memcpy
  kMemset,          // memset, gpu_memset
};
PluginEventType PluginTypeOfCategory(std::string_view category);

// The plugin's collectives (trace.py's NcclOpNameSet and GlooOpNameSet).
bool IsPluginCollectiveName(std::string_view name);
bool IsNcclCollectiveName(std::string_view name);
// enumerate(DataLoader)#...__next__ or enumerate(DataPipe)#...
bool IsPluginDataLoaderName(std::string_view name);

// What an event's name makes it to the plugin, for the operator-like types.
struct PluginTemplate {
  PluginEventType type = PluginEventType::kNone;
  bool step = false;        // ProfilerStep#N of an operator or user annotation
  bool dataloader = false;  // enumerate(DataLoader)#...__next__ or enumerate(DataPipe)#...
  bool collective = false;  // nccl:/gloo: broadcast, reduce, all_reduce, all_gather, reduce_scatter
  int64_t step_number = 0;
};

struct PluginEvents {
  std::vector<PluginTemplate> of_template;
  // For each device work (an index into EventIds::device_work): the runtime call (an index
  // into EventIds::runtime) the plugin ties it to by correlation, or kNoIndex. Device work the
  // plugin does not type as kernel, copy or set has kNoIndex.
  std::vector<uint32_t> runtime_of_work;
  // Events the plugin reads (every type but kNone), by start time, ties in trace order (its
  // events.sort(key=ts)).
  std::vector<uint32_t> by_start;

  const PluginTemplate& of(const Trace& trace, size_t event) const {
    return of_template[trace.events.template_column()[event]];
  }
};

PluginEvents ReadPluginEvents(const EventModel& model);

}  // namespace profsh
