#include "engine/report/line_downsample.h"

#include <algorithm>

namespace profsh::report {

std::vector<size_t> PointsToKeep(const std::vector<double>& x,
                                 const std::vector<ChartSeries>& series, size_t max_points) {
  const size_t n = x.size();
  std::vector<size_t> keep;
  if (n <= max_points) {
    keep.resize(n);
    for (size_t i = 0; i < n; ++i) keep[i] = i;
    return keep;
  }
  // Each bucket adds at most 4 per series (an extreme and the point after it, where a step line
  // leaves it, so a spike keeps its width) and its last point; the first point comes on top.
  const size_t per_bucket = 4 * series.size() + 1;
  const size_t buckets = std::max<size_t>(1, (max_points - 1) / per_bucket);
  const double lo = x.front(), hi = x.back();
  const double width = (hi - lo) / static_cast<double>(buckets);
  keep.push_back(0);
  size_t begin = 0;
  for (size_t b = 0; b < buckets && begin < n; ++b) {
    // The bucket [lo + b·width, lo + (b+1)·width); the last one takes the rest.
    size_t end = begin;
    if (b + 1 == buckets || !(width > 0)) {
      end = n;
    } else {
      const double limit = lo + static_cast<double>(b + 1) * width;
      while (end < n && x[end] < limit) ++end;
    }
    if (end == begin) continue;
    for (const ChartSeries& s : series) {
      // Where each extreme is first reached, and the point after it is last held.
      size_t low = begin, high = begin, low_last = begin, high_last = begin;
      for (size_t i = begin + 1; i < end; ++i) {
        const double v = s.values[i];
        if (v < s.values[low]) low = i;
        if (v > s.values[high]) high = i;
        if (v <= s.values[low]) low_last = i;
        if (v >= s.values[high]) high_last = i;
      }
      keep.push_back(low);
      keep.push_back(high);
      for (size_t last : {low_last, high_last})
        if (last + 1 < n) keep.push_back(last + 1);
    }
    keep.push_back(end - 1);
    begin = end;
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}

void ThinLineChart(Chart* chart, size_t max_points) {
  if (chart->kind != ChartKind::kLine || chart->x.size() <= max_points) return;
  for (const ChartSeries& s : chart->series)
    if (s.values.size() != chart->x.size()) return;  // the caller checks; nothing to align here
  const std::vector<size_t> keep = PointsToKeep(chart->x, chart->series, max_points);
  chart->points_before_thinning = chart->x.size();
  std::vector<double> x;
  x.reserve(keep.size());
  for (size_t i : keep) x.push_back(chart->x[i]);
  chart->x = std::move(x);
  for (ChartSeries& s : chart->series) {
    std::vector<double> values;
    values.reserve(keep.size());
    for (size_t i : keep) values.push_back(s.values[i]);
    s.values = std::move(values);
  }
}

}  // namespace profsh::report
