#include "engine/analysis/model/event_roles.h"

#include <cctype>
#include <string>

#include "engine/trace/kineto_schema.h"

namespace profsh {

CategoryRole ClassifyCategory(std::string_view category) {
  // Case does not matter: torch 1.x's Kineto wrote "Kernel", "Memcpy", "Memset".
  std::string c(category);
  for (char& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  using namespace kineto;
  auto device = [](DeviceWorkKind work, EventKind kind) {
    return CategoryRole{EventRole::kDeviceWork, work, AnnotationSource::kNone, kind};
  };
  // mtia_ccp_events: MTIA's device work (HTA's KERNEL_CATEGORY_PATTERN counts it too).
  if (c == kKernel || c == "mtia_ccp_events")
    return device(DeviceWorkKind::kKernel, EventKind::kKernel);
  if (c == kGpuMemcpy || c == "memcpy") return device(DeviceWorkKind::kMemcpy, EventKind::kCopy);
  if (c == kGpuMemset || c == "memset") return device(DeviceWorkKind::kMemset, EventKind::kSet);
  // A stream or device synchronization: device work to HTA, "other" in the tables.
  if (c == "cuda_sync") return device(DeviceWorkKind::kSync, EventKind::kOther);
  // record_function ranges, and the NVTX and ITT ranges profsh's collector records.
  if (c == kUserAnnotation)
    return {EventRole::kAnnotation, {}, AnnotationSource::kRecordFunction, EventKind::kAnnotation};
  if (c == "nvtx")
    return {EventRole::kAnnotation, {}, AnnotationSource::kNvtx, EventKind::kAnnotation};
  if (c == "itt")
    return {EventRole::kAnnotation, {}, AnnotationSource::kItt, EventKind::kAnnotation};
  if (c == kGpuUserAnnotation)
    return {
        EventRole::kGpuAnnotation, {}, AnnotationSource::kRecordFunction, EventKind::kAnnotation};
  // Every backend's runtime and driver calls (cuda_, mtia_, xpu_, privateuse1_...).
  if (c == "runtime" || c == "driver" || c.ends_with("_runtime") || c.ends_with("_driver"))
    return {EventRole::kRuntime, {}, AnnotationSource::kNone, EventKind::kRuntime};
  if (c == kPythonFunction) return {EventRole::kPythonFunction, {}, {}, EventKind::kOther};
  if (c == "trace" || c == kAc2g || c == kFwdBwd || c == "async_cpu_to_gpu" || c == "cpu_to_cuda" ||
      c == "cuda_event" || c == "overhead" || c == "external_correlation" ||
      c == "cuda_profiler_range" || c == "gpu_memory" || c == kCpuInstantEvent || c == "profsh" ||
      c == "cpu_sample") {
    return {};
  }
  return {EventRole::kCpuOp, {}, AnnotationSource::kNone, EventKind::kCpuOp};
}

EventRoles::EventRoles(const Trace& trace) {
  const auto memory_name = trace.strings.Find(kineto::kMemoryEvent);
  const auto oom_name = trace.strings.Find(kineto::kOutOfMemoryEvent);
  // Categories are few: each is classified once.
  std::vector<CategoryRole> of_category;
  of_category.reserve(trace.categories.size());
  for (size_t c = 0; c < trace.categories.size(); ++c)
    of_category.push_back(ClassifyCategory(trace.category_name(static_cast<uint16_t>(c))));
  roles_.reserve(trace.events.templates().size());
  for (const EventTemplate& t : trace.events.templates()) {
    TemplateRole r;
    const char phase = EventTable::PhaseOf(t.kind);
    if (phase == 'X') {
      const CategoryRole& c = of_category[EventTable::CategoryOf(t.kind)];
      r.role = c.role;
      r.work = c.work;
      r.source = c.source;
      r.kind = c.kind;
      const std::string_view name = trace.str(t.name);
      r.aten = name.starts_with("aten::");
      if (auto step = kineto::ProfilerStepNumber(name)) {
        r.has_step = true;
        r.step = *step;
      }
    } else if ((phase == 'i' || phase == 'I') &&
               ((memory_name && t.name == *memory_name) || (oom_name && t.name == *oom_name))) {
      r.role = EventRole::kMemory;
      r.kind = EventKind::kMemory;
      r.out_of_memory = oom_name && t.name == *oom_name;
    }
    roles_.push_back(r);
  }
}

}  // namespace profsh
