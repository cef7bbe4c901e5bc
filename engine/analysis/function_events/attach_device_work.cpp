// Device time to the ops that launched it: each kernel, copy or set to its op (by its link), and
// each GPU-side annotation span to the CPU range it mirrors, as torch's FunctionEvents do.
#include <unordered_map>

#include "engine/analysis/function_events/builder.h"

namespace profsh {

void FunctionEventsBuilder::AttachDeviceWork() {
  const bool annotations = AnyDeviceAnnotation();
  if (links_.empty() && !annotations) return;
  kernel_ns_.assign(f_.start_.size(), 0);
  if (f_.torch_format == TorchFormat::k2) kernel_us_.assign(f_.start_.size(), 0.0);
  f_.launches.resize(links_.size());
  for (size_t k = 0; k < links_.size(); ++k) {
    int32_t op = link_op_[k];
    if (op < 0 && runtime_of_link_[k] >= 0) op = f_.parent_[runtime_of_link_[k]];
    uint32_t device = links_[k];
    f_.launches[k] = {device, op, runtime_of_link_[k]};
    const int64_t tc_ns = UsesTensorCores(device) ? f_.end_[device] - f_.start_[device] : 0;
    if (tc_ns != 0) {
      if (tc_ns_.empty()) tc_ns_.assign(f_.start_.size(), 0);
      tc_ns_[device] = tc_ns;
    }
    if (op < 0) continue;
    kernel_ns_[op] += f_.end_[device] - f_.start_[device];
    if (tc_ns != 0) tc_ns_[op] += tc_ns;
    if (!kernel_us_.empty())
      kernel_us_[op] += FloatUs(f_.end_[device]) - FloatUs(f_.start_[device]);
  }
  if (annotations) AttachDeviceAnnotations();
}

bool FunctionEventsBuilder::AnyDeviceAnnotation() const {
  for (uint8_t flags : f_.flags_) {
    if ((flags & FunctionEvents::kDevice) && (flags & FunctionEvents::kAnnotation)) return true;
  }
  return false;
}

// torch (1.13 and 2.x) attaches every CUDA-typed event linked to an op as one of its kernels,
// and a gpu_user_annotation span is linked (its "External id") to the CPU range it mirrors: the
// span's length counts in that range's device time, on top of the kernels inside it. So a range
// around an op whose kernels the span covers (record_param_comms around nccl:all_reduce) counts
// that device time twice, in torch as here; ProfilerStep* shows its step's GPU span as self
// device time, over 100 %.
void FunctionEventsBuilder::AttachDeviceAnnotations() {
  auto is_span = [&](size_t c) {
    return (f_.flags_[c] & FunctionEvents::kDevice) && (f_.flags_[c] & FunctionEvents::kAnnotation);
  };
  auto external_of_span = [&](size_t c) {
    return model_.args().Int(candidate_events_[c], KnownArg::kExternalId);
  };
  std::unordered_map<int64_t, int32_t> op_of_external;
  for (size_t c = 0; c < candidate_events_.size(); ++c) {
    if (!is_span(c)) continue;
    if (const auto id = external_of_span(c)) op_of_external.emplace(*id, -1);
  }
  // The first CPU range of the view with the span's External id, in trace order.
  const RangeIds& ranges = model_.ids().ranges;
  for (size_t r = 0; r < ranges.size(); ++r) {
    if (range_candidate_[r] < 0 || ranges.external[r] == kNoId) continue;
    auto it = op_of_external.find(ranges.external[r]);
    if (it != op_of_external.end() && it->second < 0) it->second = range_candidate_[r];
  }
  for (size_t c = 0; c < candidate_events_.size(); ++c) {
    if (!is_span(c)) continue;
    const auto id = external_of_span(c);
    if (!id) continue;
    const int32_t op = op_of_external[*id];
    if (op < 0) continue;
    kernel_ns_[op] += f_.end_[c] - f_.start_[c];
    if (!kernel_us_.empty()) kernel_us_[op] += FloatUs(f_.end_[c]) - FloatUs(f_.start_[c]);
  }
}

}  // namespace profsh
