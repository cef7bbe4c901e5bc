// The CPU events of each thread in torch's (start, -end) order, and each one's parent: the
// innermost earlier range that contains it (torch's _populate_cpu_children). Every later pass
// (merging, sums, backward stacks, torch 2.x's float times) walks this order.
#include <algorithm>

#include "engine/analysis/function_events/builder.h"

namespace profsh {

void FunctionEventsBuilder::Order() {
  const size_t n = f_.start_.size();
  uint32_t threads = 0;
  // Device work takes no part in nesting, merging or summing: only CPU events are ordered.
  const LargeVector<uint32_t>& thread = thread_.empty() ? f_.track_ : thread_;
  const uint8_t* flags = f_.flags_.data();
  for (uint32_t t : thread) threads = std::max(threads, t + 1);
  std::vector<uint32_t> offset(threads + 1, 0);
  for (size_t c = 0; c < n; ++c) offset[thread[c] + 1] += !(flags[c] & FunctionEvents::kDevice);
  for (uint32_t t = 0; t < threads; ++t) offset[t + 1] += offset[t];
  segments_.clear();
  for (uint32_t t = 0; t < threads; ++t) {
    if (offset[t + 1] > offset[t]) segments_.emplace_back(offset[t], offset[t + 1]);
  }
  order_.resize(offset[threads]);
  for (uint32_t c = 0; c < n; ++c) {
    if (!(flags[c] & FunctionEvents::kDevice)) order_[offset[thread[c]]++] = c;
  }
  // Within a thread: (start, -end), ties in candidate (torch's input) order.
  const int64_t* start = f_.start_.data();
  const int64_t* end = f_.end_.data();
  auto before = [&](uint32_t a, uint32_t b) {
    if (start[a] != start[b]) return start[a] < start[b];
    if (end[a] != end[b]) return end[a] > end[b];
    return a < b;
  };
  // Traces are nearly in order (a range is often written after the ranges it contains): set the
  // few events that break the order aside, keep the rest in place, sort the few and merge them
  // back from the end.
  std::vector<uint32_t> outliers;
  for (auto [b, e] : segments_) {
    uint32_t* seg = order_.data();
    if (std::is_sorted(seg + b, seg + e, before)) continue;
    outliers.clear();
    size_t kept_end = b;
    for (size_t k = b; k < e; ++k) {
      uint32_t x = seg[k];
      if (kept_end == b || !before(x, seg[kept_end - 1])) {
        seg[kept_end++] = x;
      } else {
        outliers.push_back(x);
      }
    }
    if (outliers.size() * 8 > static_cast<size_t>(e - b)) {
      std::copy(outliers.begin(), outliers.end(), seg + kept_end);
      std::sort(seg + b, seg + e, before);
      continue;
    }
    std::sort(outliers.begin(), outliers.end(), before);
    // Backward merge: the free slots are at the end, so nothing is overwritten before it moves.
    size_t k = kept_end, o = outliers.size(), w = e;
    while (o > 0) {
      if (k > b && before(outliers[o - 1], seg[k - 1])) {
        seg[--w] = seg[--k];
      } else {
        seg[--w] = outliers[--o];
      }
    }
  }
}

// torch's _populate_cpu_children: a parent is the innermost earlier range containing [s, e).
void FunctionEventsBuilder::Nest() {
  const size_t n = f_.start_.size();
  f_.parent_.assign(n, -1);
  child_count_.assign(n, 0);
  // Raw pointers: a byte store would make the compiler load each vector's data pointer again.
  const int64_t* start = f_.start_.data();
  const int64_t* end = f_.end_.data();
  const uint32_t* order = order_.data();
  int32_t* parent = f_.parent_.data();
  uint8_t* child_count = child_count_.data();
  std::vector<uint32_t> open;
  for (auto [b, e] : segments_) {
    open.clear();
    for (uint32_t k = b; k < e; ++k) {
      uint32_t c = order[k];  // CPU events only
      while (!open.empty()) {
        uint32_t p = open.back();
        if (start[c] >= end[p] || end[c] > end[p]) {
          open.pop_back();
        } else {
          parent[c] = static_cast<int32_t>(p);
          if (child_count[p] < 255) child_count[p] += 1;
          break;
        }
      }
      open.push_back(c);
    }
  }
}

}  // namespace profsh
