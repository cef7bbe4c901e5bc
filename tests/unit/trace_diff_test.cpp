// HTA's TraceDiff rules on small traces: which step an event belongs to (overlapping steps,
// device work through its runtime call, Triton's cpu_op on stream 0), the device split, the five
// groups, HTA's shortened names, and the errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/analysis/trace_diff.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

std::string Event(const std::string& cat, const std::string& name, int64_t ts, int64_t dur,
                  const std::string& args = "") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name +
         R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + (args.empty() ? "" : R"(, "args": {)" + args + "}") + "}";
}

std::string TraceOf(const std::vector<std::string>& events) {
  std::string json = R"({"traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) json += (i ? ", " : "") + events[i];
  return json + "]}";
}

struct Totals {
  int64_t control_counts, control_duration, test_counts, test_duration;
  std::string change;
};

std::map<std::string, Totals> Diff(const Trace& control, const Trace& test,
                                   const TraceDiffOptions& options = {}) {
  auto rows = DiffTraces(control, test, options);
  EXPECT_TRUE(rows.ok()) << (rows.ok() ? "" : rows.error().message);
  std::map<std::string, Totals> out;
  if (!rows.ok()) return out;
  for (size_t r = 0; r < rows->rows.size(); ++r) {
    const std::vector<Cell> row = rows->rows[r];
    out[row[0].text] = {row[1].int_value, row[2].int_value, row[3].int_value, row[4].int_value,
                        row[8].text};
  }
  return out;
}

// Two steps, the second overlapping the end of the first; a kernel launched in step 2 that runs
// after both; a Triton cpu_op on stream 0; an event before any step.
const std::vector<std::string> kSteps = {
    Event("user_annotation", "ProfilerStep#1", 100, 100),
    Event("user_annotation", "ProfilerStep#2", 180, 100),
    Event("cpu_op", "aten::mm", 150, 10),
    Event("cpu_op", "aten::add", 190, 5),  // in both ranges: the later step (trace order) owns it
    Event("cuda_runtime", "cudaLaunchKernel", 250, 5, R"("correlation": 9)"),
    Event("kernel", "gemm", 400, 30, R"("stream": 7, "correlation": 9)"),
    Event("cpu_op", "triton_op", 120, 4, R"("stream": 0)"),
    Event("cpu_op", "before", 10, 4),
    Event("Trace", "PyTorch Profiler (0)", 0, 1000),  // HTA's parser drops category Trace
};

TEST(TraceDiff, StepsFollowHtaIterations) {
  auto t = MustImport(TraceOf(kSteps));
  TraceDiffOptions options;
  options.control_step = {DiffStep::Kind::kNumber, 1};
  options.test_step = {DiffStep::Kind::kNumber, 2};
  auto d = Diff(*t, *t, options);
  EXPECT_EQ(d.at("aten::mm").change, "deleted");
  EXPECT_EQ(d.at("aten::add").change, "added");  // step 2, not 1
  EXPECT_EQ(d.at("gemm").change, "added");       // its runtime call is in step 2
  EXPECT_EQ(d.at("gemm").test_duration, 30);
  EXPECT_EQ(d.at("triton_op").change, "deleted");
  EXPECT_EQ(d.count("before"), 0u);
  EXPECT_EQ(d.count("PyTorch Profiler (0)"), 0u);

  // Default: the first step of each; "whole" takes everything but category Trace.
  auto first = Diff(*t, *t);
  EXPECT_EQ(first.count("gemm"), 0u);
  EXPECT_EQ(first.at("aten::mm").change, "unchanged");
  options.control_step = options.test_step = {DiffStep::Kind::kWhole, 0};
  auto whole = Diff(*t, *t, options);
  EXPECT_EQ(whole.at("before").control_counts, 1);
  EXPECT_EQ(whole.count("PyTorch Profiler (0)"), 0u);
}

TEST(TraceDiff, DeviceIsWhetherAStreamIsGiven) {
  auto t = MustImport(TraceOf(kSteps));
  TraceDiffOptions options;
  options.control_step = options.test_step = {DiffStep::Kind::kWhole, 0};
  options.device = DiffDevice::kGpu;
  auto gpu = Diff(*t, *t, options);
  EXPECT_EQ(gpu.size(), 2u);  // gemm, and the cpu_op with a stream argument (as in HTA)
  EXPECT_EQ(gpu.count("triton_op"), 1u);
  options.device = DiffDevice::kCpu;
  auto cpu = Diff(*t, *t, options);
  EXPECT_EQ(cpu.count("gemm") + cpu.count("triton_op"), 0u);
  EXPECT_EQ(cpu.count("cudaLaunchKernel"), 1u);
}

TEST(TraceDiff, FiveGroupsAndHtaRounding) {
  auto control = MustImport(
      TraceOf({Event("cpu_op", "a", 0, 5), Event("cpu_op", "b", 10, 5), Event("cpu_op", "b", 20, 5),
               Event("cpu_op", "c", 30, 5), Event("cpu_op", "d", 40, 5)}));
  // Nanosecond times: 50.6 µs + 0.3 µs counts ceil(50.6)=51 .. floor(50.9)=50: -1 µs, as in HTA.
  auto test = MustImport(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 50.6, "dur": 0.3},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 60.0, "dur": 2.0},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 70.0, "dur": 2.0},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 80.0, "dur": 2.0},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "e", "pid": 1, "tid": 1, "ts": 90.0, "dur": 2.0}]})");
  auto d = Diff(*control, *test);  // no steps: whole traces, with a note
  EXPECT_EQ(d.at("a").change, "increased");
  EXPECT_EQ(d.at("a").test_duration, 1);  // -1 + 2
  EXPECT_EQ(d.at("b").change, "decreased");
  EXPECT_EQ(d.at("c").change, "unchanged");
  EXPECT_EQ(d.at("d").change, "deleted");
  EXPECT_EQ(d.at("e").change, "added");
  auto rows = DiffTraces(*control, *test, {});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->notes.size(), 2u);
  EXPECT_NE(rows->notes[0].find("has no ProfilerStep"), std::string::npos);
}

TEST(TraceDiff, MissingStepIsAnErrorNamingTheSteps) {
  auto t = MustImport(TraceOf(kSteps));
  TraceDiffOptions options;
  options.test_step = {DiffStep::Kind::kNumber, 7};
  auto rows = DiffTraces(*t, *t, options);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.error().message.find("test trace"), std::string::npos);
  EXPECT_NE(rows.error().message.find("has no ProfilerStep#7 (its steps: 1, 2)"),
            std::string::npos);
}

TEST(TraceDiff, ShortNamesAsHta) {
  EXPECT_EQ(ShortenName("void at::native::vectorized_elementwise_kernel<4, at::native::Add>("
                        "int, at::detail::Array<char*, 3>)"),
            "at::native::vectorized_elementwise_kernel");
  EXPECT_EQ(ShortenName("aten::add"), "aten::add");
  EXPECT_EQ(ShortenName("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(ShortenName("std::vector<int> f(int) -> int"), "int");
}

TEST(TraceDiff, ParsesOptionSpellings) {
  EXPECT_EQ(*ParseDiffDevice("gpu"), DiffDevice::kGpu);
  EXPECT_FALSE(ParseDiffDevice("tpu").ok());
  EXPECT_EQ(ParseDiffStep("whole")->kind, DiffStep::Kind::kWhole);
  EXPECT_EQ(ParseDiffStep("12")->number, 12);
  EXPECT_FALSE(ParseDiffStep("12x").ok());
  EXPECT_FALSE(ParseDiffStep("").ok());
}

}  // namespace
}  // namespace profsh
