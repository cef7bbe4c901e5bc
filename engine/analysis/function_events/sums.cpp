// Inclusive totals: each CPU event's children's time, memory and device time summed into it, so
// self values are totals minus children's; events merged away are marked removed. Tensor-core
// time and eligibility (tensor_cores.cpp) go up in the same pass.
#include "engine/analysis/function_events/builder.h"
#include "engine/util/saturating.h"

namespace profsh {

void FunctionEventsBuilder::RemoveMergedAndSum() {
  const size_t n = f_.start_.size();
  const bool memory = !f_.cpu_memory_.empty();
  const bool device = !kernel_ns_.empty();
  if (device) f_.cuda_total_ = kernel_ns_;
  const bool tensor_cores = !tc_ns_.empty();
  if (tensor_cores) f_.tc_total_ = tc_ns_;
  LargeVector<uint8_t>& eligible = f_.tc_eligible_;  // allocated at the first eligible event
  f_.children_cpu_.assign(n, 0);
  if (memory) {
    f_.children_cpu_memory_.assign(n, 0);
    if (!f_.cuda_memory_.empty()) f_.children_cuda_memory_.assign(n, 0);
  }
  // Children follow their parents within a thread, so one backward pass sums subtrees.
  for (size_t k = order_.size(); k-- > 0;) {
    uint32_t c = order_[k];
    if (removed_[c]) continue;
    // Its children, visited before it, have already passed their eligibility on.
    if (EligibleOnItsOwn(c)) {
      if (eligible.empty()) eligible.assign(n, 0);
      eligible[c] = 1;
    }
    int32_t p = f_.parent_[c];
    if (p < 0) continue;
    // Saturating: hostile sizes and times near int64's limits would overflow the sums.
    auto add = [](auto& total, int64_t v) { total = SaturatingAdd(total, v); };
    add(f_.children_cpu_[p], f_.end_[c] - f_.start_[c]);
    if (memory) {
      add(f_.children_cpu_memory_[p], f_.cpu_memory_[c]);
      if (!f_.cuda_memory_.empty()) add(f_.children_cuda_memory_[p], f_.cuda_memory_[c]);
    }
    if (device) add(f_.cuda_total_[p], f_.cuda_total_[c]);
    if (!eligible.empty()) eligible[p] |= eligible[c];
    if (tensor_cores) add(f_.tc_total_[p], f_.tc_total_[c]);
  }
  if (device) f_.self_cuda_ = std::move(kernel_ns_);
  if (tensor_cores) f_.tc_self_ = std::move(tc_ns_);
  if (!any_removed_) return;
  for (size_t c = 0; c < n; ++c) {
    if (removed_[c]) f_.flags_[c] |= FunctionEvents::kRemoved;
  }
}

}  // namespace profsh
