// Tensor cores on the operator view, as the TensorBoard plugin's operator view counts them
// (torch_tb_profiler's node.py, OperatorNode.fill_stats): each op's tensor-core kernel time, its
// own (after merging, as its device time) and with everything inside it, and its eligibility.
// The plugin's tree holds only operators; ranges it leaves out (user annotations, steps) pass
// eligibility through here, so an operator is eligible when one inside it is, as in the plugin.
#include "engine/analysis/function_events/builder.h"
#include "engine/analysis/tensorboard/tensor_core.h"
#include "engine/util/saturating.h"

namespace profsh {

// Kernels only: copies, sets and GPU-side annotation spans never use tensor cores.
bool FunctionEventsBuilder::UsesTensorCores(uint32_t device_candidate) {
  const uint8_t flags = f_.flags_[device_candidate];
  if (flags & (FunctionEvents::kCopy | FunctionEvents::kSet | FunctionEvents::kAnnotation))
    return false;
  const uint32_t name = f_.name_[device_candidate];
  if (name >= tensor_core_name_.size()) tensor_core_name_.resize(name + 1, -1);
  int8_t& known = tensor_core_name_[name];
  if (known < 0) known = PluginTensorCoreKernel(f_.strings.Get(name)) ? 1 : 0;
  return known == 1;
}

void FunctionEventsBuilder::SumTensorCores() {
  const size_t n = f_.start_.size();
  // By name (ProfilerStep* and other rewritten names are on no list, so either name will do).
  std::vector<int8_t> listed(f_.strings.size(), -1);
  LargeVector<uint8_t> eligible;
  for (uint32_t c : order_) {
    if (removed_[c]) continue;
    int8_t& on_list = listed[f_.name_[c]];
    if (on_list < 0)
      on_list = PluginTensorCoreEligibleOperator(f_.strings.Get(f_.name_[c])) ? 1 : 0;
    const bool launched = !tc_ns_.empty() && tc_ns_[c] > 0;
    if (!on_list && !launched) continue;
    if (eligible.empty()) eligible.assign(n, 0);
    eligible[c] = 1;
  }
  if (!tc_ns_.empty()) f_.tc_total_ = tc_ns_;
  // Children follow their parents within a thread, so one backward pass sums subtrees.
  if (!eligible.empty() || !tc_ns_.empty()) {
    for (size_t k = order_.size(); k-- > 0;) {
      const uint32_t c = order_[k];
      if (removed_[c]) continue;
      const int32_t p = f_.parent_[c];
      if (p < 0) continue;
      if (!eligible.empty()) eligible[p] |= eligible[c];
      if (!tc_ns_.empty()) f_.tc_total_[p] = SaturatingAdd(f_.tc_total_[p], f_.tc_total_[c]);
    }
  }
  f_.tc_eligible_ = std::move(eligible);
  f_.tc_self_ = std::move(tc_ns_);
}

}  // namespace profsh
