// nsys stats' reports on a small synthetic trace whose answers follow from the definitions in
// docs/ANALYSIS.md (the golden test gpu_analyses_stats checks the shared traces).
#include "engine/analysis/nsys_stats.h"

#include <gtest/gtest.h>

#include "gpu_views_fixture.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::CellText;

AnalysisRows Report(const std::string& name) {
  auto trace = testing::MustImport(testing::kGpuViewsTrace);
  auto rows = NsysStatsReport(*trace, name);
  EXPECT_TRUE(rows.ok()) << name;
  return rows.ok() ? std::move(rows.value()) : AnalysisRows{};
}

TEST(NsysStats, KernelSummaryMostTimeFirst) {
  const AnalysisRows rows = Report("cuda_gpu_kern_sum");
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(CellText(rows, 0, "Name"), "volta_sgemm_128x64_nn");
  EXPECT_EQ(CellText(rows, 0, "Total Time (ns)"), "20000");
  EXPECT_EQ(CellText(rows, 0, "Time (%)"), "66.7");
  EXPECT_EQ(CellText(rows, 1, "Name"), "relu_kernel");
  EXPECT_EQ(CellText(rows, 1, "Instances"), "1");
  EXPECT_EQ(CellText(rows, 1, "StdDev (ns)"), "0.0");  // one value
}

TEST(NsysStats, ApiSummaryGroupsCallsByName) {
  const AnalysisRows rows = Report("cuda_api_sum");
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(CellText(rows, 0, "Name"), "cudaLaunchKernel");
  EXPECT_EQ(CellText(rows, 0, "Num Calls"), "2");
  EXPECT_EQ(CellText(rows, 0, "Total Time (ns)"), "10000");
  EXPECT_EQ(CellText(rows, 1, "Total Time (ns)"), "4000");
}

TEST(NsysStats, CopiesAreNamedAsNsysNamesThem) {
  const AnalysisRows size = Report("cuda_gpu_mem_size_sum");
  ASSERT_EQ(size.rows.size(), 1u);
  EXPECT_EQ(CellText(size, 0, "Operation"), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(CellText(size, 0, "Total (MB)"), "3.000");  // MB = 10^6 bytes
  const AnalysisRows time = Report("cuda_gpu_mem_time_sum");
  ASSERT_EQ(time.rows.size(), 1u);
  EXPECT_EQ(CellText(time, 0, "Total Time (ns)"), "10000");
}

TEST(NsysStats, KernelsBelongToTheInnermostRangeAroundTheirLaunch) {
  const AnalysisRows rows = Report("nvtx_kern_sum");
  ASSERT_EQ(rows.rows.size(), 2u);
  // Kernels launched outside every range first (an empty range sorts first).
  EXPECT_EQ(CellText(rows, 0, "NVTX Range"), "");
  EXPECT_EQ(CellText(rows, 0, "Kernel Name"), "relu_kernel");
  EXPECT_EQ(CellText(rows, 1, "NVTX Range"), "inner");
  EXPECT_EQ(CellText(rows, 1, "Kernel Name"), "volta_sgemm_128x64_nn");
  EXPECT_EQ(CellText(rows, 1, "NVTX Inst"), "1");
}

TEST(NsysStats, ARangesProjectionSpansTheWorkLaunchedInIt) {
  const AnalysisRows rows = Report("nvtx_gpu_proj_sum");
  // layer1 launched the kernel (30-50) and the copy (55-65); inner only the kernel.
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(CellText(rows, 0, "Range"), "layer1");
  EXPECT_EQ(CellText(rows, 0, "Total Proj Time (ns)"), "35000");
  EXPECT_EQ(CellText(rows, 0, "Total GPU Ops"), "2");
  EXPECT_EQ(CellText(rows, 0, "Avg Range Lvl"), "0.0");
  EXPECT_EQ(CellText(rows, 0, "Avg Num Child"), "1.0");
  EXPECT_EQ(CellText(rows, 1, "Range"), "inner");
  EXPECT_EQ(CellText(rows, 1, "Total Proj Time (ns)"), "20000");
  EXPECT_EQ(CellText(rows, 1, "Avg Range Lvl"), "1.0");
}

TEST(NsysStats, RangeSummaryCountsEveryKindOfRange) {
  const AnalysisRows rows = Report("nvtx_sum");
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(CellText(rows, 0, "Range"), "layer1");
  EXPECT_EQ(CellText(rows, 0, "Style"), "PushPop");
  EXPECT_EQ(CellText(rows, 1, "Range"), "inner");
}

TEST(NsysStats, AnUnknownReportNamesTheKnownOnes) {
  auto trace = testing::MustImport(testing::kGpuViewsTrace);
  auto rows = NsysStatsReport(*trace, "cuda_gpu_sum");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.error().message.find("cuda_gpu_kern_sum"), std::string::npos);
  EXPECT_EQ(NsysReportNames().size(), 7u);
}

}  // namespace
}  // namespace profsh
