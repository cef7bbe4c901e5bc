// torch 2.x's times as its FunctionEvents hold them: floats counted from the trace start,
// summed in its order, so the tables' last digits come out as torch's do.
#include <vector>

#include "engine/analysis/function_events/builder.h"

namespace profsh {

// torch 2.x's FunctionEvent times: time_range holds (t - trace start) / 1000 as floats;
// cpu_time_total is end - start, self_cpu_time_total that minus the sum of its children's in
// their order, device_time_total the sum of its kernels' float durations plus the sum of its
// children's device totals.
void FunctionEventsBuilder::TorchFloatTimes() {
  const size_t n = f_.start_.size();
  f_.float_cpu_total_.assign(n, 0.0);
  f_.float_self_cpu_.assign(n, 0.0);
  const bool device = !kernel_us_.empty();
  for (size_t c = 0; c < n; ++c) {
    const double total = FloatUs(f_.end_[c]) - FloatUs(f_.start_[c]);
    if (f_.flags_[c] & FunctionEvents::kDevice) continue;
    f_.float_cpu_total_[c] = total;
  }
  // Children in torch's order: the CPU order within a thread, which order_ holds.
  std::vector<double> children_cpu(n, 0.0);
  std::vector<uint32_t> child_begin(n + 1, 0), children;
  for (uint32_t c : order_) {
    if (removed_[c] || f_.parent_[c] < 0) continue;
    children_cpu[f_.parent_[c]] += f_.float_cpu_total_[c];
    child_begin[f_.parent_[c] + 1] += 1;
  }
  for (size_t c = 0; c < n; ++c) {
    if (!(f_.flags_[c] & FunctionEvents::kDevice) && !removed_[c])
      f_.float_self_cpu_[c] = f_.float_cpu_total_[c] - children_cpu[c];
  }
  if (!device) return;
  for (size_t c = 0; c < n; ++c) child_begin[c + 1] += child_begin[c];
  children.resize(child_begin[n]);
  std::vector<uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
  for (uint32_t c : order_) {
    if (removed_[c] || f_.parent_[c] < 0) continue;
    children[fill[f_.parent_[c]]++] = c;
  }
  f_.float_cuda_total_.assign(n, 0.0);
  f_.float_self_cuda_.assign(n, 0.0);
  for (size_t c = 0; c < n; ++c) {
    if (f_.flags_[c] & FunctionEvents::kDevice) {
      f_.float_cuda_total_[c] = f_.float_self_cuda_[c] =
          FloatUs(f_.end_[c]) - FloatUs(f_.start_[c]);
    }
  }
  // Children come after their parent in order_, so a backward pass sees them first.
  for (size_t k = order_.size(); k-- > 0;) {
    const uint32_t c = order_[k];
    if (removed_[c]) continue;
    double of_children = 0.0;
    for (uint32_t j = child_begin[c]; j < child_begin[c + 1]; ++j)
      of_children += f_.float_cuda_total_[children[j]];
    f_.float_cuda_total_[c] = kernel_us_[c] + of_children;
    f_.float_self_cuda_[c] = f_.float_cuda_total_[c] - of_children;
  }
}

}  // namespace profsh
