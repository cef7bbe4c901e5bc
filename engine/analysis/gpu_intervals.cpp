#include "engine/analysis/gpu_intervals.h"

#include <algorithm>

namespace profsh {

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const Interval& a, const Interval& b) { return a.ts < b.ts; });
  std::vector<Interval> merged;
  int64_t max_end = INT64_MIN;
  for (const Interval& iv : intervals) {
    if (merged.empty() || iv.ts > max_end) {
      merged.push_back(iv);
    } else {
      merged.back().end = std::max(merged.back().end, iv.end);
    }
    max_end = std::max(max_end, iv.end);
  }
  return merged;
}

int64_t UnionLength(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& iv : merged) total += iv.end - iv.ts;
  return total;
}

int64_t OverlapLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].ts, b[j].ts);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

std::vector<Interval> IntersectIntervals(const std::vector<Interval>& a,
                                         const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].ts, b[j].ts);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

std::vector<Interval> SubtractIntervals(const std::vector<Interval>& a,
                                        const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& iv : a) {
    int64_t from = iv.ts;
    while (j < b.size() && b[j].end <= from) ++j;
    for (size_t k = j; k < b.size() && b[k].ts < iv.end; ++k) {
      if (b[k].ts > from) out.push_back({from, b[k].ts});
      from = std::max(from, b[k].end);
    }
    if (iv.end > from) out.push_back({from, iv.end});
  }
  return out;
}

}  // namespace profsh
