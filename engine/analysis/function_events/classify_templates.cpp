// What each event template is to the operator view, decided once per template (a trace has a
// few thousand templates for millions of events) from the model's role of the template: an event
// of the view (CPU op, user range, runtime call, device work, GPU-side annotation) or not, a
// memory record; its flags, display name, inputs and stack. torch's tables leave out
// synchronizations, Python functions, ITT tasks of other domains and torch's utility ops.
#include <algorithm>

#include "engine/analysis/function_events/builder.h"
#include "engine/trace/kineto_schema.h"

namespace profsh {

// Whether the ITT tasks of a template (one domain: the domain is an argument of the schema)
// join the operator view; notes the domains left out.
bool FunctionEventsBuilder::IttTaskJoins(uint32_t schema_plus_one) {
  std::string domain;
  if (schema_plus_one != 0) {
    if (const auto id = args_.IttDomain(schema_plus_one - 1)) domain = trace_.str(*id);
  }
  const bool joins =
      itt_.mode == IttSelection::Mode::kAll ||
      (itt_.mode == IttSelection::Mode::kDomains &&
       std::find(itt_.domains.begin(), itt_.domains.end(), domain) != itt_.domains.end());
  if (!joins) f_.itt_domains_left_out.push_back(std::move(domain));
  return joins;
}

void FunctionEventsBuilder::ClassifyTemplates() {
  bool has_operators = false;
  for (size_t c = 0; c < trace_.categories.size(); ++c) {
    const std::string_view name = trace_.category_name(static_cast<uint16_t>(c));
    has_operators |= name == kineto::kCpuOp;
    // The device the table's columns are named after, as torch 2.x names them.
    if (name == "mtia_ccp_events" || name == "mtia_runtime") f_.device_name = "MTIA";
    if (name == "xpu_runtime" || name == "xpu_driver") f_.device_name = "XPU";
    if (name == "privateuse1_runtime" || name == "privateuse1_driver")
      f_.device_name = "PRIVATEUSE1";
  }
  if (itt_.mode == IttSelection::Mode::kAuto && !has_operators)
    itt_.mode = IttSelection::Mode::kAll;
  if (itt_.mode == IttSelection::Mode::kAuto) itt_ = {IttSelection::Mode::kDomains, {"PyTorch"}};

  const auto& templates = trace_.events.templates();
  info_.assign(templates.size(), TemplateInfo{});
  itt_left_out_.assign(templates.size(), 0);
  for (size_t t = 0; t < templates.size(); ++t) {
    const EventTemplate& tp = templates[t];
    const TemplateRole& role = model_.roles().of_template(static_cast<uint32_t>(t));
    TemplateInfo& ti = info_[t];
    uint8_t flags = 0;
    switch (role.role) {
      case EventRole::kMemory:
        ti.memory = true;
        ti.out_of_memory = role.out_of_memory;
        continue;
      case EventRole::kCpuOp:
        break;
      case EventRole::kAnnotation:
        flags = FunctionEvents::kUserRange;
        break;
      case EventRole::kGpuAnnotation:  // the device-side span of a user range: listed, not counted
        flags = FunctionEvents::kDevice | FunctionEvents::kAnnotation | FunctionEvents::kUserRange;
        break;
      case EventRole::kRuntime:
        flags = FunctionEvents::kRuntime;
        break;
      case EventRole::kDeviceWork:
        if (role.work == DeviceWorkKind::kSync) continue;
        flags =
            FunctionEvents::kDevice | (role.work == DeviceWorkKind::kMemcpy ? FunctionEvents::kCopy
                                       : role.work == DeviceWorkKind::kMemset ? FunctionEvents::kSet
                                                                              : 0);
        break;
      case EventRole::kPythonFunction:
      case EventRole::kOther:
        continue;
    }
    if (role.source == AnnotationSource::kItt && !IttTaskJoins(tp.schema_plus_one)) {
      itt_left_out_[t] = 1;
      any_itt_left_out_ = true;
      continue;
    }
    bool filtered;
    ti.name = NameOf(tp.name, &filtered);
    if (filtered) continue;
    ti.joins = true;
    ti.flags = flags;
    ti.track = tp.track;
    ti.has_args = tp.schema_plus_one != 0;
    if (!(flags & FunctionEvents::kDevice) && ti.has_args) {
      const uint32_t schema = tp.schema_plus_one - 1;
      if (want_inputs_) ti.inputs = schema_inputs_[schema];
      if (want_stacks_) ti.stack = schema_stack_[schema];
    }
  }
}

}  // namespace profsh
