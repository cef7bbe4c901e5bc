#include "engine/analysis/model/event_ids.h"

#include <stdexcept>

#include "engine/analysis/arg_reader.h"
#include "engine/trace/kineto_schema.h"

namespace profsh {

EventIds ReadEventIds(const Trace& trace, const EventRoles& roles) {
  const EventTable& ev = trace.events;
  if (ev.size() >= kNoIndex)
    throw std::length_error("the event model indexes events in 32 bits; the trace has " +
                            std::to_string(ev.size()) + " events");
  enum Key : size_t { kCorrelation, kExternal, kDevice, kStream, kExternalLowercase };
  const ArgReader reader(trace, {kineto::kCorrelation, kineto::kExternalId, kineto::kDevice,
                                 kineto::kStream, kineto::kExternalIdLowercase});
  auto read = [&](ArgRef args, size_t key) {
    int64_t v;
    if (reader.GetInt(args, key, &v)) return v;
    if (key == kExternal && reader.GetInt(args, kExternalLowercase, &v)) return v;
    return kNoId;
  };
  EventIds ids;
  const uint32_t* event_template = ev.template_column().data();
  // Each list is sized once, from a count per template: no growth by doubling.
  std::vector<size_t> per_template(roles.template_count(), 0);
  for (size_t i = 0; i < ev.size(); ++i) ++per_template[event_template[i]];
  size_t work = 0, runtime = 0, ranges = 0, gpu_annotations = 0, steps = 0;
  for (size_t t = 0; t < per_template.size(); ++t) {
    const TemplateRole& r = roles.of_template(static_cast<uint32_t>(t));
    const size_t n = per_template[t];
    work += r.role == EventRole::kDeviceWork ? n : 0;
    runtime += r.role == EventRole::kRuntime ? n : 0;
    ranges += r.role == EventRole::kCpuOp || r.role == EventRole::kAnnotation ? n : 0;
    gpu_annotations += r.role == EventRole::kGpuAnnotation ? n : 0;
    steps += r.has_step ? n : 0;
  }
  DeviceWorkIds& d = ids.device_work;
  for (auto* column : {&d.correlation, &d.external, &d.device, &d.stream}) column->reserve(work);
  d.event.reserve(work);
  ids.runtime.event.reserve(runtime);
  ids.runtime.correlation.reserve(runtime);
  ids.runtime.external.reserve(runtime);
  ids.ranges.event.reserve(ranges);
  ids.ranges.external.reserve(ranges);
  ids.gpu_annotations.reserve(gpu_annotations);
  ids.steps.reserve(steps);
  for (size_t i = 0; i < ev.size(); ++i) {
    const TemplateRole& r = roles.of_template(event_template[i]);
    const auto e = static_cast<uint32_t>(i);
    switch (r.role) {
      case EventRole::kDeviceWork: {
        const ArgRef args = ev.args(i);
        d.event.push_back(e);
        d.correlation.push_back(read(args, kCorrelation));
        d.external.push_back(read(args, kExternal));
        d.device.push_back(read(args, kDevice));
        d.stream.push_back(read(args, kStream));
        continue;
      }
      case EventRole::kRuntime: {
        const ArgRef args = ev.args(i);
        ids.runtime.event.push_back(e);
        ids.runtime.correlation.push_back(read(args, kCorrelation));
        ids.runtime.external.push_back(read(args, kExternal));
        continue;
      }
      case EventRole::kGpuAnnotation:
        ids.gpu_annotations.push_back(e);
        continue;
      case EventRole::kCpuOp:
      case EventRole::kAnnotation:
        ids.ranges.event.push_back(e);
        ids.ranges.external.push_back(read(ev.args(i), kExternal));
        break;
      case EventRole::kPythonFunction:
      case EventRole::kOther:
      case EventRole::kMemory:
        break;
    }
    if (r.has_step) ids.steps.push_back({e, r.step});
  }
  return ids;
}

}  // namespace profsh
