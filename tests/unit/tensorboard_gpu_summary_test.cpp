// The TensorBoard plugin's GPU summary and kernel table on small synthetic traces
// (docs/ANALYSIS.md, "TensorBoard views"), and the model's deviceProperties.
#include <gtest/gtest.h>

#include "engine/analysis/model/device_properties.h"
#include "engine/analysis/tensorboard/gpu_summary.h"
#include "engine/analysis/tensorboard/kernel_summary.h"
#include "engine/analysis/tensorboard/tensor_core.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

// One step, 0..100 µs, on device 0 of an "X" GPU: kernel A (10..30, 0.5 blocks per SM, 40 %
// occupancy, a tensor-core name) and kernel B (20..40, 0.75, 60 %), both launched by aten::mm;
// kernel C at 200..220 after the step, launched by nothing.
const std::string kTrace = R"json({"deviceProperties": [
  {"id": 0, "name": "X", "totalGlobalMem": 1073741824, "computeMajor": 8, "computeMinor": 6,
   "numSms": 84, "other": {"nested": [1, 2]}}],
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 2, "dur": 10,
   "args": {"External id": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 3,
   "dur": 2, "args": {"correlation": 1, "External id": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6,
   "dur": 2, "args": {"correlation": 2, "External id": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 150,
   "dur": 2, "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "volta_h884gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 20,
   "args": {"correlation": 1, "device": 0, "stream": 7, "blocks per SM": 0.5,
            "est. achieved occupancy %": 40}},
  {"ph": "X", "cat": "kernel", "name": "B", "pid": 0, "tid": 7, "ts": 20, "dur": 20,
   "args": {"correlation": 2, "device": 0, "stream": 7, "blocks per SM": 0.75,
            "est. achieved occupancy %": 60}},
  {"ph": "X", "cat": "kernel", "name": "B", "pid": 0, "tid": 7, "ts": 200, "dur": 10,
   "args": {"correlation": 3, "device": 0, "stream": 7}}
]})json";

TEST(TensorBoardGpuSummary, MetricsOverTheStepsSpan) {
  auto trace = MustImport(kTrace);
  const GpuSummary s = ComputeGpuSummary(*trace);
  ASSERT_EQ(s.rows.size(), 1u);
  const GpuSummaryRow& g = s.rows[0];
  EXPECT_EQ(g.device, 0);
  EXPECT_EQ(g.name, "X");
  EXPECT_EQ(g.memory_bytes, 1073741824);
  EXPECT_EQ(g.compute_capability, "8.6");
  // Busy 10..40 of 0..100; the kernel at 200 is after the last step.
  EXPECT_DOUBLE_EQ(g.utilization_pct, 30);
  // 10..20 at 0.5, 20..30 at min(1.25, 1), 30..40 at 0.75: 22.5 of 100 µs.
  ASSERT_TRUE(g.sm_efficiency_pct.has_value());
  EXPECT_DOUBLE_EQ(*g.sm_efficiency_pct, 22.5);
  ASSERT_TRUE(g.achieved_occupancy_pct.has_value());
  EXPECT_DOUBLE_EQ(*g.achieved_occupancy_pct, 50);
  // Of the 40 µs aten::mm launched, 20 on tensor cores; the unlaunched kernel does not count.
  ASSERT_TRUE(g.tensor_core_pct.has_value());
  EXPECT_DOUBLE_EQ(*g.tensor_core_pct, 50);
}

TEST(TensorBoardGpuSummary, WithoutValuesTheMetricsAreEmpty) {
  auto trace = MustImport(R"json({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 3,
   "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 50,
   "args": {"correlation": 1, "device": 1, "stream": 7}}]})json");
  const GpuSummary s = ComputeGpuSummary(*trace);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].device, 1);
  EXPECT_FALSE(s.rows[0].name.has_value());  // no deviceProperties
  EXPECT_DOUBLE_EQ(s.rows[0].utilization_pct, 50);
  EXPECT_FALSE(s.rows[0].sm_efficiency_pct.has_value());
  EXPECT_FALSE(s.rows[0].achieved_occupancy_pct.has_value());
  EXPECT_FALSE(s.rows[0].tensor_core_pct.has_value());  // no operator launched a kernel
  const AnalysisRows rows = GpuSummaryRows(s);
  EXPECT_EQ(rows.rows.cell(0, rows.Column("sm_efficiency_pct")).kind, Cell::Kind::kEmpty);
}

TEST(TensorBoardGpuSummary, NoKernelsNoRows) {
  auto trace = MustImport(R"json({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0, "dur": 100}]})json");
  const GpuSummary s = ComputeGpuSummary(*trace);
  EXPECT_TRUE(s.rows.empty());
  EXPECT_EQ(s.notes.size(), 1u);
}

TEST(TensorBoardKernelSummary, ARowPerKernelNameByTotalTime) {
  auto trace = MustImport(kTrace);
  const KernelSummary k = ComputeKernelSummary(*trace);
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(k.rows[0].name, "B");  // 30 µs before 20
  EXPECT_FALSE(k.rows[0].tensor_cores);
  EXPECT_EQ(k.rows[0].calls, 2);
  EXPECT_DOUBLE_EQ(k.rows[0].total_us, 30);
  EXPECT_DOUBLE_EQ(k.rows[0].mean_us, 15);
  EXPECT_DOUBLE_EQ(k.rows[0].max_us, 20);
  EXPECT_DOUBLE_EQ(k.rows[0].min_us, 10);
  // The call without values weighs in as 0: (0.75·20 + 0·10) / 30.
  EXPECT_DOUBLE_EQ(k.rows[0].blocks_per_sm, 0.5);
  EXPECT_DOUBLE_EQ(k.rows[0].achieved_occupancy_pct, 40);
  EXPECT_EQ(k.rows[1].name, "volta_h884gemm");
  EXPECT_TRUE(k.rows[1].tensor_cores);
  EXPECT_TRUE(k.has_blocks_per_sm);
  EXPECT_TRUE(k.has_occupancy);
  EXPECT_DOUBLE_EQ(k.tensor_core_time_ratio, 0.4);
  const AnalysisRows rows = KernelSummaryRows(k);
  EXPECT_EQ(rows.columns,
            (std::vector<std::string>{"name", "tensor_cores", "calls", "total", "mean", "max",
                                      "min", "blocks_per_sm", "achieved_occupancy_pct"}));
  EXPECT_EQ(rows.rows.cell(1, 1).text, "Yes");
}

TEST(TensorBoardKernelSummary, ColumnsWithoutValuesAreEmpty) {
  auto trace = MustImport(R"json({"traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 0,
   "args": {"device": 0}}]})json");
  const KernelSummary k = ComputeKernelSummary(*trace);
  ASSERT_EQ(k.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(k.rows[0].blocks_per_sm, 0);  // zero weights: the plugin's 0
  const AnalysisRows rows = KernelSummaryRows(k);
  EXPECT_EQ(rows.rows.cell(0, rows.Column("blocks_per_sm")).kind, Cell::Kind::kEmpty);
  EXPECT_TRUE(ComputeKernelSummary(*MustImport(R"({"traceEvents": []})")).rows.empty());
}

TEST(TensorBoardTensorCores, ThePluginsLists) {
  EXPECT_TRUE(PluginTensorCoreKernel("sm80_xmma_gemm_f16f16_f16f32"));
  EXPECT_TRUE(PluginTensorCoreKernel("volta_fp16_s884gemm_fp16_128x128"));
  EXPECT_FALSE(PluginTensorCoreKernel("volta_sgemm_128x64_nn"));
  EXPECT_TRUE(PluginTensorCoreEligibleOperator("aten::conv2d"));
  EXPECT_TRUE(PluginTensorCoreEligibleOperator("AddmmBackward"));
  EXPECT_FALSE(PluginTensorCoreEligibleOperator("aten::conv2d_"));
  EXPECT_FALSE(PluginTensorCoreEligibleOperator(""));
}

TEST(DeviceProperties, ReadsTheFieldsAndSkipsTheRest) {
  const auto devices = ParseDeviceProperties(
      R"([{"id": 0, "name": "A \"x\"", "totalGlobalMem": 42, "computeMajor": 8,
           "computeMinor": 0, "numSms": 108, "extra": [1, {"a": null}], "f": 1.5},
          {"id": 1, "computeMajor": "8"}, 7])");
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].name, "A \"x\"");
  EXPECT_EQ(devices[0].total_global_mem, 42);
  EXPECT_EQ(devices[0].num_sms, 108);
  EXPECT_EQ(devices[1].id, 1);
  EXPECT_FALSE(devices[1].compute_major.has_value());  // a string, not a number
  EXPECT_FALSE(devices[2].id.has_value());             // not an object
  EXPECT_TRUE(ParseDeviceProperties("[]").empty());
  EXPECT_TRUE(ParseDeviceProperties("{").empty());
}

}  // namespace
}  // namespace profsh
