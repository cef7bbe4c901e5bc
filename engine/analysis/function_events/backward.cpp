// Backward code: which ops are autograd's backward functions (traces do not record torch's
// RecordScope::BACKWARD_FUNCTION, so it is read from the evaluate_function wrappers), and the
// forward op's stack that the ops under them take.
#include <unordered_map>

#include "engine/analysis/function_events/builder.h"

namespace profsh {

// Backward functions (torch's RecordScope::BACKWARD_FUNCTION, which traces do not record): the
// autograd node X that a "autograd::engine::evaluate_function: X" range wraps on the same
// thread. Microsecond rounding can make the node stick out of its wrapper, so the test is that
// the node starts within the latest such wrapper, not that it nests inside it.
void FunctionEventsBuilder::MarkBackwardFunctions() {
  backward_.assign(f_.start_.size(), 0);
  static constexpr std::string_view kPrefix = "autograd::engine::evaluate_function: ";
  std::vector<uint32_t> node_of(out_->strings.size(), UINT32_MAX);  // wrapper's name -> node's name
  bool any = false;
  for (uint32_t s = 0; s < out_->strings.size(); ++s) {
    std::string_view name = out_->strings.Get(s);
    if (!name.starts_with(kPrefix)) continue;
    auto node = out_->strings.Find(name.substr(kPrefix.size()));
    if (node) {
      node_of[s] = *node;
      any = true;
    }
  }
  if (!any) return;
  std::unordered_map<uint32_t, int64_t>
      latest_wrapper_end;  // node name -> end of its latest wrapper
  for (auto [b, e] : segments_) {
    latest_wrapper_end.clear();
    for (uint32_t k = b; k < e; ++k) {
      uint32_t c = order_[k];
      if (f_.flags_[c] & FunctionEvents::kDevice) continue;
      uint32_t recorded = RecordedName(c);
      if (node_of[recorded] != UINT32_MAX) latest_wrapper_end[node_of[recorded]] = f_.end_[c];
      auto it = latest_wrapper_end.find(recorded);
      if (it != latest_wrapper_end.end() && f_.start_[c] <= it->second) backward_[c] = 1;
      // A node sorted just before its wrapper (same start, longer through rounding).
      if (!backward_[c] && k + 1 < e) {
        uint32_t next = order_[k + 1];
        if (node_of[RecordedName(next)] == recorded && f_.start_[next] == f_.start_[c])
          backward_[c] = 1;
      }
    }
  }
}

// Backward ops take the stack of their forward op (torch's _set_backward_stacktraces). The
// forward op is the first (in torch's order) op outside backward code with the same sequence
// number; JSON traces give no usable thread id to match on.
void FunctionEventsBuilder::AssignBackwardStacks() {
  if (!want_stacks_) return;
  const size_t n = f_.start_.size();
  LargeVector<int32_t> bw(n, -1);
  for (uint32_t c = 0; c < n; ++c) {
    if (removed_[c]) continue;
    int32_t p = static_cast<int32_t>(c);
    while (p >= 0 && !backward_[p]) p = f_.parent_[p];
    bw[c] = p;
  }
  auto earlier = [&](uint32_t a, uint32_t b) {
    if (f_.start_[a] != f_.start_[b]) return f_.start_[a] < f_.start_[b];
    if (f_.end_[a] != f_.end_[b]) return f_.end_[a] > f_.end_[b];
    return a < b;
  };
  std::unordered_map<int64_t, uint32_t> forward;  // sequence number -> first forward op
  for (uint32_t c = 0; c < n; ++c) {
    if (removed_[c] || bw[c] >= 0 || seq_[c] < 0) continue;
    auto [it, inserted] = forward.emplace(seq_[c], c);
    if (!inserted && earlier(c, it->second)) it->second = c;
  }
  LargeVector<uint32_t> stacks(n, 0);
  for (uint32_t c = 0; c < n; ++c) {
    if (removed_[c] || bw[c] < 0) continue;
    int64_t seq = seq_[bw[c]];
    uint32_t stack = 0;
    if (seq >= 0) {
      auto it = forward.find(seq);
      if (it != forward.end()) stack = f_.stack_[it->second];
    }
    stacks[c] = stack;
  }
  for (uint32_t c = 0; c < n; ++c) {
    if (!removed_[c] && bw[c] >= 0) f_.stack_[c] = stacks[c];
  }
}

}  // namespace profsh
