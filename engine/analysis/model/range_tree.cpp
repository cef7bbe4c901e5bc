#include "engine/analysis/model/range_tree.h"

#include <algorithm>
#include <numeric>

namespace profsh {

namespace {
constexpr uint32_t kTop = UINT32_MAX;

// Indexes 0..n-1 ordered by track, then by `before` within a track, then by index. A trace's
// events come in time order, so within a track they mostly already are: bucket by track (one
// pass) and sort only the tracks that are not in order.
template <typename TrackOf, typename Before>
std::vector<uint32_t> OrderByTrack(size_t n, TrackOf track_of, Before before) {
  const auto by_index_at_ties = [&](uint32_t a, uint32_t b) {
    return before(a, b) || (!before(b, a) && a < b);
  };
  std::vector<uint32_t> order(n);
  uint32_t max_track = 0;
  for (size_t i = 0; i < n; ++i) max_track = std::max(max_track, track_of(i));
  if (n == 0) return order;
  if (max_track > 4 * n + 1024) {  // sparse track ids: a count per track would cost more
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t ta = track_of(a), tb = track_of(b);
      return ta != tb ? ta < tb : by_index_at_ties(a, b);
    });
    return order;
  }
  std::vector<uint32_t> begin(static_cast<size_t>(max_track) + 2, 0);
  for (size_t i = 0; i < n; ++i) ++begin[track_of(i) + 1];
  for (size_t t = 1; t < begin.size(); ++t) begin[t] += begin[t - 1];
  std::vector<uint32_t> next(begin.begin(), begin.end() - 1);
  for (size_t i = 0; i < n; ++i) order[next[track_of(i)]++] = static_cast<uint32_t>(i);
  // Each track's bucket is in index order, so one already ordered by `before` is done.
  for (size_t t = 0; t + 1 < begin.size(); ++t) {
    const auto first = order.begin() + begin[t], last = order.begin() + begin[t + 1];
    if (!std::is_sorted(first, last, before)) std::sort(first, last, by_index_at_ties);
  }
  return order;
}

}  // namespace

RangeTree NestRanges(std::span<const RangeExtent> ranges) {
  RangeTree tree;
  tree.order = OrderByTrack(
      ranges.size(), [&](size_t r) { return ranges[r].track; },
      [&](uint32_t a, uint32_t b) {
        const RangeExtent &x = ranges[a], &y = ranges[b];
        return x.ts != y.ts ? x.ts < y.ts : x.end > y.end;
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
  const std::vector<uint32_t> order = OrderByTrack(
      instants.size(), [&](size_t c) { return instants[c].track; },
      [&](uint32_t a, uint32_t b) { return instants[a].ts < instants[b].ts; });
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

}  // namespace profsh
