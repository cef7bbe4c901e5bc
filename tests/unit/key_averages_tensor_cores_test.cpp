// Tensor cores on key_averages rows, as the TensorBoard plugin's operator view counts them
// (docs/ANALYSIS.md, "Tensor cores on key_averages rows"), on a trace whose ratios are known.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

std::string Ev(const std::string& name, const std::string& cat, int ts, int dur, int tid,
               const std::string& args) {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": )" + args + "}";
}
std::string Op(const std::string& name, int ts, int dur, int external,
               const std::string& dims = "[]") {
  return Ev(name, "cpu_op", ts, dur, 1,
            R"({"External id": )" + std::to_string(external) + R"(, "Input Dims": )" + dims + "}");
}
// A launch at `ts` by the op of `external`, and its kernel on the GPU's stream (tid 7).
std::string Launch(int ts, int external, int correlation, const std::string& kernel, int kernel_ts,
                   int kernel_dur) {
  const std::string ids = R"({"External id": )" + std::to_string(external) +
                          R"(, "correlation": )" + std::to_string(correlation) + "}";
  return Ev("cudaLaunchKernel", "cuda_runtime", ts, 2, 1, ids) + "," +
         Ev(kernel, "kernel", kernel_ts, kernel_dur, 7, ids);
}

// Kernels: volta_h884gemm_64x64_nn, sm80_xmma_gemm_f16f16 and xmma_gemm_copy hold tensor-core
// patterns (h884, xmma_gemm); elementwise_kernel does not.
std::unique_ptr<Trace> SyntheticTrace() {
  return testing::MustImport(
      "{\"traceEvents\": [" +
      // aten::linear (on the plugin's list) around aten::t and aten::addmm; addmm launches 40 µs
      // on tensor cores and 10 µs not; a second addmm, of other shapes, 50 µs not.
      Op("aten::linear", 0, 200, 1) + "," + Op("aten::t", 10, 10, 2) + "," +
      Op("aten::addmm", 30, 120, 3, "[[4], [4, 8], [8, 4]]") + "," +
      Launch(40, 3, 31, "volta_h884gemm_64x64_nn", 1000, 40) + "," +
      Launch(50, 3, 32, "elementwise_kernel", 1040, 10) + "," +
      Op("aten::addmm", 250, 40, 4, "[[2], [2, 2], [2, 2]]") + "," +
      Launch(260, 4, 41, "elementwise_kernel", 1100, 50) + "," +
      // aten::custom_op, on no list: its first call launches 10 µs off tensor cores, its second
      // 30 µs on them, which makes that call eligible.
      Op("aten::custom_op", 300, 50, 5) + "," + Launch(310, 5, 51, "elementwise_kernel", 1200, 10) +
      "," + Op("aten::custom_op", 360, 40, 6) + "," +
      Launch(370, 6, 61, "sm80_xmma_gemm_f16f16", 1220, 30) + "," +
      // my_wrapper holds a user range holding aten::mm (listed): eligibility passes through.
      Op("my_wrapper", 500, 200, 7) + "," +
      Ev("range", "user_annotation", 510, 180, 1, R"({"External id": 70})") + "," +
      Op("aten::mm", 520, 80, 8) + "," + Launch(530, 8, 81, "elementwise_kernel", 1300, 20) + "," +
      // aten::copy_ with a lone aten::copy_ inside: torch merges them, the merged event takes the
      // inner one's kernels (10 µs on tensor cores).
      Op("aten::copy_", 800, 100, 9) + "," + Op("aten::copy_", 810, 80, 10) + "," +
      Launch(820, 10, 101, "xmma_gemm_copy", 1400, 10) + "," + Op("aten::add", 950, 40, 11) + "," +
      Launch(960, 11, 111, "elementwise_kernel", 1500, 10) + "]}");
}

const AverageRow& RowOf(const KeyAverages& a, std::string_view name, DeviceType device,
                        size_t nth = 0) {
  for (const AverageRow& r : a.rows) {
    if (a.events->strings.Get(r.key) == name && r.device == device && nth-- == 0) return r;
  }
  throw std::runtime_error("no row " + std::string(name));
}

const AverageRow& Cpu(const KeyAverages& a, std::string_view name, size_t nth = 0) {
  return RowOf(a, name, DeviceType::kCpu, nth);
}

TEST(KeyAveragesTensorCores, RatiosAndEligibilityByName) {
  auto trace = SyntheticTrace();
  const KeyAverages a = ComputeKeyAverages(BuildFunctionEvents(*trace), false, 0);

  // Two addmm calls: 40 µs of 100 on tensor cores, all of it their own.
  const AverageRow& addmm = Cpu(a, "aten::addmm");
  EXPECT_EQ(addmm.count, 2);
  EXPECT_EQ(addmm.tc_self_ns, 40000);
  EXPECT_EQ(addmm.tc_total_ns, 40000);
  EXPECT_DOUBLE_EQ(addmm.tc_self_pct(), 40.0);
  EXPECT_DOUBLE_EQ(addmm.tc_total_pct(), 40.0);
  EXPECT_TRUE(addmm.tc_eligible);

  // linear launched nothing itself (self 0 %); of the 50 µs under it, 40 on tensor cores.
  const AverageRow& linear = Cpu(a, "aten::linear");
  EXPECT_TRUE(linear.tc_eligible);
  EXPECT_DOUBLE_EQ(linear.tc_self_pct(), 0.0);
  EXPECT_DOUBLE_EQ(linear.tc_total_pct(), 80.0);

  EXPECT_FALSE(Cpu(a, "aten::t").tc_eligible);
  EXPECT_FALSE(Cpu(a, "aten::add").tc_eligible);
  EXPECT_DOUBLE_EQ(Cpu(a, "aten::add").tc_self_pct(), 0.0);
  EXPECT_FALSE(Cpu(a, "cudaLaunchKernel").tc_eligible);

  // The row takes its first call's eligibility, as the plugin's OperatorAgg does; its time
  // counts both: 30 µs of 40.
  const AverageRow& custom = Cpu(a, "aten::custom_op");
  EXPECT_FALSE(custom.tc_eligible);
  EXPECT_DOUBLE_EQ(custom.tc_self_pct(), 75.0);

  EXPECT_TRUE(Cpu(a, "aten::mm").tc_eligible);
  EXPECT_TRUE(Cpu(a, "range").tc_eligible);
  EXPECT_TRUE(Cpu(a, "my_wrapper").tc_eligible);
  EXPECT_DOUBLE_EQ(Cpu(a, "my_wrapper").tc_total_pct(), 0.0);

  // The merged copy_ holds the inner one's tensor-core kernel, and is eligible by launching it.
  const AverageRow& copy = Cpu(a, "aten::copy_");
  EXPECT_EQ(copy.count, 1);
  EXPECT_DOUBLE_EQ(copy.tc_self_pct(), 100.0);
  EXPECT_DOUBLE_EQ(copy.tc_total_pct(), 100.0);
  EXPECT_TRUE(copy.tc_eligible);

  // A kernel's own row: all or nothing, and never an eligible operator.
  const AverageRow& gemm = RowOf(a, "volta_h884gemm_64x64_nn", DeviceType::kCuda);
  EXPECT_DOUBLE_EQ(gemm.tc_self_pct(), 100.0);
  EXPECT_DOUBLE_EQ(gemm.tc_total_pct(), 100.0);
  EXPECT_FALSE(gemm.tc_eligible);
  EXPECT_DOUBLE_EQ(RowOf(a, "elementwise_kernel", DeviceType::kCuda).tc_self_pct(), 0.0);
}

TEST(KeyAveragesTensorCores, EventsCarryTheirOwnTimeAndEligibility) {
  auto trace = SyntheticTrace();
  auto fe = BuildFunctionEvents(*trace);
  std::vector<std::tuple<int64_t, bool, int64_t>> calls;  // start, eligible, own TC time
  for (size_t i = 0; i < fe->size(); ++i) {
    if (!fe->removed(i) && fe->strings.Get(fe->name(i)) == "aten::custom_op")
      calls.emplace_back(fe->start_ns(i), fe->tc_eligible(i), fe->tc_self_ns(i));
  }
  std::sort(calls.begin(), calls.end());
  ASSERT_EQ(calls.size(), 2u);
  // The first call launched no tensor-core kernel, the second did.
  EXPECT_FALSE(std::get<1>(calls[0]));
  EXPECT_EQ(std::get<2>(calls[0]), 0);
  EXPECT_TRUE(std::get<1>(calls[1]));
  EXPECT_EQ(std::get<2>(calls[1]), 30000);
}

TEST(KeyAveragesTensorCores, ByInputShape) {
  auto trace = SyntheticTrace();
  const KeyAverages a = ComputeKeyAverages(BuildFunctionEvents(*trace), true, 0);
  // Rows in order of first occurrence: the 4x8 call's 40 of 50 µs, then the 2x2 call's none.
  EXPECT_DOUBLE_EQ(Cpu(a, "aten::addmm", 0).tc_self_pct(), 80.0);
  EXPECT_DOUBLE_EQ(Cpu(a, "aten::addmm", 1).tc_self_pct(), 0.0);
  EXPECT_TRUE(Cpu(a, "aten::addmm", 1).tc_eligible);
}

TEST(KeyAveragesTensorCores, NoTensorCoreKernelsNoEligibleOperators) {
  auto trace = testing::MustImport("{\"traceEvents\": [" + Op("aten::add", 0, 10, 1) + "," +
                                   Launch(2, 1, 11, "elementwise_kernel", 100, 5) + "]}");
  const KeyAverages a = ComputeKeyAverages(BuildFunctionEvents(*trace), false, 0);
  for (const AverageRow& r : a.rows) {
    EXPECT_FALSE(r.tc_eligible);
    EXPECT_EQ(r.tc_self_ns, 0);
    EXPECT_EQ(r.tc_total_ns, 0);
  }
}

}  // namespace
}  // namespace profsh
