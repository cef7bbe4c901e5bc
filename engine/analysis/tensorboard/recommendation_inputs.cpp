#include "engine/analysis/tensorboard/recommendation_inputs.h"

#include <algorithm>
#include <string_view>

#include "engine/analysis/model/event_model.h"

namespace profsh {

namespace {

// The plugin's EventParser flags: DataParallel.forward and DistributedDataParallel.forward
// ranges, nccl:* collectives (its NcclOpNameSet), and the devices that ran kernels, copies or
// sets (its used_devices).
void ReadParserFlags(const EventModel& model, PluginRuleInputs* in) {
  const Trace& trace = model.trace();
  const auto& templates = trace.events.templates();
  const EventRoles& roles = model.roles();
  for (size_t t = 0; t < templates.size(); ++t) {
    const EventRole role = roles.of_template(static_cast<uint32_t>(t)).role;
    if (role != EventRole::kCpuOp && role != EventRole::kAnnotation &&
        role != EventRole::kPythonFunction)
      continue;
    const std::string_view name = trace.str(templates[t].name);
    if (name == "DataParallel.forward") in->use_dp = true;
    if (name == "DistributedDataParallel.forward") in->use_ddp = true;
    for (std::string_view nccl : {"nccl:broadcast", "nccl:reduce", "nccl:all_reduce",
                                  "nccl:all_gather", "nccl:reduce_scatter"})
      if (name == nccl) in->uses_nccl = true;
  }
  const DeviceWorkIds& work = model.ids().device_work;
  for (size_t k = 0; k < work.size(); ++k) {
    if (model.role(work.event[k]).work == DeviceWorkKind::kSync || work.device[k] == kNoId)
      continue;
    in->used_devices.push_back(work.device[k]);
  }
  std::sort(in->used_devices.begin(), in->used_devices.end());
  in->used_devices.erase(std::unique(in->used_devices.begin(), in->used_devices.end()),
                         in->used_devices.end());
}

}  // namespace

PluginRuleInputs PluginRuleInputsOf(const Trace& trace) {
  PluginRuleInputs in;
  ReadParserFlags(ModelOf(trace), &in);
  return in;
}

}  // namespace profsh
