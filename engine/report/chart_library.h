// The charting library reports inline: Apache ECharts' dist/echarts.min.js, installed by the
// build from engine/report/web/package.json (npm ci, pinned by package-lock.json) and embedded
// into the binary (chart_library.S).
#pragma once

#include <string_view>

namespace profsh::report {

std::string_view ChartLibrarySource();
std::string_view ChartLibraryVersion();

}  // namespace profsh::report
