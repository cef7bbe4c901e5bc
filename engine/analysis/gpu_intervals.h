// Interval arithmetic on device work: HTA's merge of overlapping intervals, the length of a
// union and the overlap of two unions, in integer microseconds.
#pragma once

#include <cstdint>
#include <vector>

namespace profsh {

struct Interval {
  int64_t ts, end;
};

// HTA's merge_kernel_intervals: sorted by start, an interval joins the group before it unless it
// starts after every end seen so far; a group becomes [its first start, its greatest end].
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);
int64_t UnionLength(const std::vector<Interval>& merged);
// Length of the time covered by both (each merged, so disjoint and sorted).
int64_t OverlapLength(const std::vector<Interval>& a, const std::vector<Interval>& b);
// The time covered by both, and the time of `a` not covered by `b` (each merged).
std::vector<Interval> IntersectIntervals(const std::vector<Interval>& a,
                                         const std::vector<Interval>& b);
std::vector<Interval> SubtractIntervals(const std::vector<Interval>& a,
                                        const std::vector<Interval>& b);

}  // namespace profsh
