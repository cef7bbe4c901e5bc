#include "engine/analysis/model/range_tree.h"

#include <algorithm>
#include <numeric>

namespace profsh {

namespace {
constexpr uint32_t kTop = UINT32_MAX;
}

RangeTree NestRanges(std::span<const RangeExtent> ranges) {
  RangeTree tree;
  tree.order.resize(ranges.size());
  std::iota(tree.order.begin(), tree.order.end(), 0u);
  std::stable_sort(tree.order.begin(), tree.order.end(), [&](uint32_t a, uint32_t b) {
    const RangeExtent &x = ranges[a], &y = ranges[b];
    if (x.track != y.track) return x.track < y.track;
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.end > y.end;
  });
  tree.parent.assign(ranges.size(), kTop);
  tree.depth.assign(ranges.size(), 0);
  tree.children.assign(ranges.size(), 0);
  std::vector<uint32_t> open;
  uint32_t track = kTop;
  for (uint32_t r : tree.order) {
    if (ranges[r].track != track) {
      open.clear();
      track = ranges[r].track;
    }
    while (!open.empty() && ranges[open.back()].end <= ranges[r].ts) open.pop_back();
    // The stack holds the parent's chain, so its size is the depth.
    tree.depth[r] = static_cast<int32_t>(open.size());
    if (!open.empty()) {
      tree.parent[r] = open.back();
      tree.children[open.back()]++;
    }
    open.push_back(r);
  }
  return tree;
}

std::vector<uint32_t> InnermostOpenRanges(std::span<const RangeExtent> ranges,
                                          const RangeTree& tree,
                                          std::span<const TrackInstant> instants) {
  std::vector<uint32_t> innermost(instants.size(), kTop);
  std::vector<uint32_t> order(instants.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const TrackInstant &x = instants[a], &y = instants[b];
    return x.track != y.track ? x.track < y.track : x.ts < y.ts;
  });
  size_t next = 0;
  std::vector<uint32_t> open;
  uint32_t track = kTop;
  for (uint32_t c : order) {
    const TrackInstant& at = instants[c];
    if (at.track != track) {
      track = at.track;
      open.clear();
      while (next < tree.order.size() && ranges[tree.order[next]].track < track) ++next;
    }
    while (next < tree.order.size() && ranges[tree.order[next]].track == track &&
           ranges[tree.order[next]].ts <= at.ts) {
      const uint32_t r = tree.order[next++];
      while (!open.empty() && ranges[open.back()].end <= ranges[r].ts) open.pop_back();
      open.push_back(r);
    }
    while (!open.empty() && ranges[open.back()].end <= at.ts) open.pop_back();
    if (!open.empty()) innermost[c] = open.back();
  }
  return innermost;
}

void OpenRangesAt(std::span<const RangeExtent> ranges, const RangeTree& tree, uint32_t innermost,
                  int64_t ts, std::vector<uint32_t>* out) {
  out->clear();
  // Every range open at `ts` lies on the sweep's stack under the innermost one, which is its
  // chain of parents; ranges on that chain that ended before `ts` are skipped.
  for (uint32_t r = innermost; r != kTop; r = tree.parent[r])
    if (ranges[r].end > ts) out->push_back(r);
  std::reverse(out->begin(), out->end());
}

}  // namespace profsh
