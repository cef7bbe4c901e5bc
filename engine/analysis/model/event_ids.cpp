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
  enum Key : size_t { kCorrelation, kExternal, kDevice, kStream };
  const ArgReader reader(
      trace, {kineto::kCorrelation, kineto::kExternalId, kineto::kDevice, kineto::kStream});
  auto read = [&](ArgRef args, size_t key) {
    int64_t v;
    return reader.GetInt(args, key, &v) ? v : kNoId;
  };
  EventIds ids;
  const uint32_t* event_template = ev.template_column().data();
  for (size_t i = 0; i < ev.size(); ++i) {
    const TemplateRole& r = roles.of_template(event_template[i]);
    const auto e = static_cast<uint32_t>(i);
    switch (r.role) {
      case EventRole::kDeviceWork: {
        const ArgRef args = ev.args(i);
        DeviceWorkIds& d = ids.device_work;
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
