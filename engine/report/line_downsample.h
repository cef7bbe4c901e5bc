// Fewer points for a line chart without losing what it is drawn to show. Picking every k-th point
// (or evenly spaced ones) skips a spike narrower than k points: a memory curve of 70,000
// allocations, thinned to 2,000, drew a 55 MB top where the trace peaked at 404 MB. Here the x
// range is cut into equal buckets and each keeps, for every series, where its lowest and highest
// values are first reached and the point after each is last held (where the line leaves it, so
// a spike keeps its width), and its last point (where a step line stands when the next bucket
// starts), so the chart's extremes are the data's.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/report/document.h"

namespace profsh::report {

// The points a report's line chart keeps: enough for a page's width, few enough to stay small.
inline constexpr size_t kMaxLinePoints = 2000;

// The indices to keep (ascending) of a line with xs `x` (ascending) and the series' values (each
// as long as x): the first point, and per bucket each series' minimum and maximum, the point
// after each is last held, and the bucket's last point. At most `max_points` when that is at least
// 4·series + 2; all of them when there are no more than `max_points`.
std::vector<size_t> PointsToKeep(const std::vector<double>& x,
                                 const std::vector<ChartSeries>& series, size_t max_points);

// Thins a line chart to at most `max_points` with PointsToKeep, recording in
// `points_before_thinning` how many it had. Bar charts and short lines are left as they are.
void ThinLineChart(Chart* chart, size_t max_points);

}  // namespace profsh::report
