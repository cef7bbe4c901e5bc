#include "engine/analysis/range_nesting.h"

#include <algorithm>

namespace profsh {

RangeTree NestRanges(const std::vector<Span>& ranges) {
  RangeTree tree;
  tree.order.resize(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) tree.order[i] = static_cast<uint32_t>(i);
  std::stable_sort(tree.order.begin(), tree.order.end(), [&](uint32_t a, uint32_t b) {
    const Span &x = ranges[a], &y = ranges[b];
    if (x.track != y.track) return x.track < y.track;
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.end > y.end;
  });
  tree.level.assign(ranges.size(), 0);
  tree.children.assign(ranges.size(), 0);
  std::vector<uint32_t> open;
  uint32_t track = UINT32_MAX;
  for (uint32_t r : tree.order) {
    if (ranges[r].track != track) {
      open.clear();
      track = ranges[r].track;
    }
    while (!open.empty() && ranges[open.back()].end <= ranges[r].ts) open.pop_back();
    tree.level[r] = static_cast<int32_t>(open.size());
    if (!open.empty()) tree.children[open.back()]++;
    open.push_back(r);
  }
  return tree;
}

std::vector<std::vector<uint32_t>> EnclosingRanges(const std::vector<Span>& ranges,
                                                   const RangeTree& tree,
                                                   const std::vector<Span>& calls) {
  std::vector<std::vector<uint32_t>> enclosing(calls.size());
  std::vector<uint32_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Span &x = calls[a], &y = calls[b];
    return x.track != y.track ? x.track < y.track : x.ts < y.ts;
  });
  size_t next_range = 0;
  std::vector<uint32_t> open;
  uint32_t track = UINT32_MAX;
  for (uint32_t c : order) {
    const Span& call = calls[c];
    if (call.track != track) {
      track = call.track;
      open.clear();
      while (next_range < tree.order.size() && ranges[tree.order[next_range]].track < track)
        ++next_range;
    }
    while (next_range < tree.order.size() && ranges[tree.order[next_range]].track == track &&
           ranges[tree.order[next_range]].ts <= call.ts) {
      uint32_t r = tree.order[next_range++];
      while (!open.empty() && ranges[open.back()].end <= ranges[r].ts) open.pop_back();
      open.push_back(r);
    }
    while (!open.empty() && ranges[open.back()].end <= call.ts) open.pop_back();
    // A range that ended before the call may still sit under one that is open; skip those.
    for (uint32_t r : open)
      if (ranges[r].end > call.ts) enclosing[c].push_back(r);
  }
  return enclosing;
}

}  // namespace profsh
