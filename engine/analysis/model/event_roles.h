// What each event is to the analyses, decided once per event template (a trace has a few hundred
// templates for millions of events) from its phase, category and name. Every analysis reads its
// roles here, so the category spellings of torch 1.x and 2.x, Kineto, HTA's test traces and
// profsh's own emitter are listed once (ClassifyCategory).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/analysis/event_kind.h"
#include "engine/trace/trace.h"

namespace profsh {

enum class EventRole : uint8_t {
  kOther,           // flows, metadata, counters, instants, "Trace" spans, ...
  kCpuOp,           // an operator (cpu_op, and every category no other role claims)
  kAnnotation,      // a CPU range a user put there: record_function, NVTX, ITT
  kGpuAnnotation,   // the device span of a record_function range (gpu_user_annotation)
  kRuntime,         // a runtime or driver call (cudaLaunchKernel, cuLaunchKernel, ...)
  kDeviceWork,      // a kernel, copy, set or synchronization on a device
  kMemory,          // a [memory] or [OutOfMemory] instant
  kPythonFunction,  // a Python function span (python_function)
};

// Device work, by what it does.
enum class DeviceWorkKind : uint8_t { kKernel, kMemcpy, kMemset, kSync };

// Who made an annotation range.
enum class AnnotationSource : uint8_t { kNone, kRecordFunction, kNvtx, kItt };

// The role of a complete ('X') event of a category, with the EventKind that rows expose.
struct CategoryRole {
  EventRole role = EventRole::kOther;
  DeviceWorkKind work = DeviceWorkKind::kKernel;  // kDeviceWork only
  AnnotationSource source = AnnotationSource::kNone;
  EventKind kind = EventKind::kOther;
};
CategoryRole ClassifyCategory(std::string_view category);

struct TemplateRole {
  EventRole role = EventRole::kOther;
  DeviceWorkKind work = DeviceWorkKind::kKernel;
  AnnotationSource source = AnnotationSource::kNone;
  EventKind kind = EventKind::kOther;
  bool aten = false;           // a complete event named "aten::..."
  bool has_step = false;       // a complete event named "ProfilerStep#N..."
  bool out_of_memory = false;  // kMemory: an [OutOfMemory] record
  int64_t step = 0;            // N of ProfilerStep#N (kineto::ProfilerStepNumber)
};

class EventRoles {
 public:
  explicit EventRoles(const Trace& trace);
  const TemplateRole& of_template(uint32_t t) const { return roles_[t]; }
  size_t template_count() const { return roles_.size(); }

 private:
  std::vector<TemplateRole> roles_;
};

}  // namespace profsh
