// Nsight Systems' `nsys stats` reports computed from any trace profsh loads, with nsys' column
// headers and units (nanoseconds, MB = 10^6 bytes), so that scripts written for nsys' CSVs read
// profsh's unchanged. Ranges are NVTX ranges, ITT tasks, record_function and user_annotation
// ranges alike. docs/ANALYSIS.md states each report's definition.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

// cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum,
// nvtx_kern_sum, nvtx_gpu_proj_sum.
const std::vector<std::string>& NsysReportNames();
// An error naming the report and the known ones when `report` is not one of them.
Result<AnalysisRows> NsysStatsReport(const Trace& trace, std::string_view report);

}  // namespace profsh
