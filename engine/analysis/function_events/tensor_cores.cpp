// Tensor cores on the operator view, as the TensorBoard plugin's operator view counts them
// (torch_tb_profiler's node.py, OperatorNode.fill_stats): each op's tensor-core kernel time, its
// own (after merging, as its device time) and with everything inside it, and its eligibility;
// the sums pass (sums.cpp) carries both up the tree. The plugin's tree holds only operators; the
// ranges it leaves out (user annotations, steps) pass eligibility on to the operators around
// them, so an operator is eligible when one inside it is, as in the plugin.
#include "engine/analysis/function_events/builder.h"
#include "engine/analysis/tensorboard/tensor_core.h"

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

// On the plugin's operator list, or launched a tensor-core kernel itself (after merging).
bool FunctionEventsBuilder::EligibleOnItsOwn(uint32_t c) {
  if (!tc_ns_.empty() && tc_ns_[c] > 0) return true;
  const uint32_t name = f_.name_[c];
  if (name >= eligible_name_.size()) eligible_name_.resize(name + 1, -1);
  int8_t& known = eligible_name_[name];
  if (known < 0) known = PluginTensorCoreEligibleOperator(f_.strings.Get(name)) ? 1 : 0;
  return known == 1;
}

}  // namespace profsh
