// Merging is a pass of its own: it rewrites parents, which the sums and the backward stacks read.
#include "engine/analysis/function_events/builder.h"

namespace profsh {

// torch's _remove_dup_nodes: a lone child with its parent's name merges into the parent, which
// takes over its children and kernels. A removed event's children find their new parent by
// following removed links, as torch's re-parenting within the same pass does.
void FunctionEventsBuilder::MergeLoneSameNameChildren() {
  removed_.assign(f_.start_.size(), 0);
  int32_t* parent = f_.parent_.data();
  uint8_t* removed = removed_.data();
  uint8_t* child_count = child_count_.data();
  const uint32_t* name = f_.name_.data();
  int64_t* kernel_ns = kernel_ns_.empty() ? nullptr : kernel_ns_.data();
  auto resolve = [&](int32_t p) {
    while (p >= 0 && removed[p]) p = parent[p];
    return p;
  };
  // torch repeats its pass until nothing changes; one pass in this order gets there. A parent
  // comes before its children, so by the time an event is visited its parent has been merged
  // away or not for good, and a parent's child count changes only through a merge into it, which
  // needs it to have had a single child, the one just visited.
  for (uint32_t c : order_) {
    if (parent[c] < 0) continue;
    int32_t p = parent[c] = resolve(parent[c]);
    if (p < 0) continue;
    if (name[p] != name[c] || child_count[p] != 1) continue;
    child_count[p] = child_count[c];
    if (kernel_ns != nullptr) kernel_ns[p] = kernel_ns[c];
    if (!tc_ns_.empty()) tc_ns_[p] = tc_ns_[c];
    if (!kernel_us_.empty()) kernel_us_[p] = kernel_us_[c];
    removed[c] = 1;
    any_removed_ = true;
  }
}

}  // namespace profsh
