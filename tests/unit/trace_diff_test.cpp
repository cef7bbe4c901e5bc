// HTA's TraceDiff rules on small traces: which step an event belongs to (overlapping steps,
// device work through its runtime call, Triton's cpu_op on stream 0), the device split, the five
// groups, HTA's shortened names, and the errors.
#include <gtest/gtest.h>

#include <map>
#include <memory>
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

// Names in HTA's order, and the columns SelectDiffRows reads.
std::vector<std::string> Names(const AnalysisRows& rows) {
  std::vector<std::string> out;
  for (size_t r = 0; r < rows.rows.size(); ++r) out.emplace_back(rows.rows.text(r, 0));
  return out;
}

// Control and test with names whose counts and durations change apart: "same" keeps its count
// and takes 100 us longer (HTA's group: unchanged), "more" runs twice as often for 1 us more,
// "less" loses 40 us and a call, "new" is added with 60 us, "tiny" grows by 1 us.
struct ChangedPair {
  std::unique_ptr<Trace> control, test;
};
ChangedPair Changed() {
  ChangedPair p;
  p.control = MustImport(TraceOf({Event("cpu_op", "same", 0, 10), Event("cpu_op", "more", 20, 5),
                                  Event("cpu_op", "less", 30, 30), Event("cpu_op", "less", 70, 20),
                                  Event("cpu_op", "tiny", 100, 3)}));
  p.test = MustImport(TraceOf({Event("cpu_op", "same", 0, 110), Event("cpu_op", "more", 120, 3),
                               Event("cpu_op", "more", 130, 3), Event("cpu_op", "less", 140, 10),
                               Event("cpu_op", "new", 160, 60), Event("cpu_op", "tiny", 230, 4)}));
  return p;
}

TEST(TraceDiff, SortsByTheChosenChange) {
  ChangedPair p = Changed();
  auto rows = DiffTraces(*p.control, *p.test, {});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(Names(*rows), (std::vector<std::string>{"less", "more", "new", "same", "tiny"}));
  EXPECT_EQ(Names(SelectDiffRows(*rows, {})), Names(*rows));  // HTA's order by default

  DiffRowSelection by_time;
  by_time.sort = "diff_duration";  // +100, +60, -40, +1, +1 by size
  AnalysisRows sorted = SelectDiffRows(*rows, by_time);
  EXPECT_EQ(Names(sorted), (std::vector<std::string>{"same", "new", "less", "more", "tiny"}));
  ASSERT_FALSE(sorted.notes.empty());
  EXPECT_NE(sorted.notes.back().find("sorted by the size of diff_duration"), std::string::npos);

  DiffRowSelection by_counts;
  by_counts.sort = "diff_counts";  // +1 (more, new), -1 (less), 0 (same, tiny)
  EXPECT_EQ(Names(SelectDiffRows(*rows, by_counts)),
            (std::vector<std::string>{"more", "new", "less", "same", "tiny"}));

  DiffRowSelection by_test;
  by_test.sort = "test_total_duration";
  EXPECT_EQ(Names(SelectDiffRows(*rows, by_test)),
            (std::vector<std::string>{"same", "new", "less", "more", "tiny"}));
}

TEST(TraceDiff, MinChangeAndRowLimitFilter) {
  ChangedPair p = Changed();
  auto rows = DiffTraces(*p.control, *p.test, {});
  ASSERT_TRUE(rows.ok());
  DiffRowSelection s;
  s.sort = "diff_duration";
  s.min_change = 40;  // |diff_duration| >= 40 us: same, new, less
  AnalysisRows kept = SelectDiffRows(*rows, s);
  EXPECT_EQ(Names(kept), (std::vector<std::string>{"same", "new", "less"}));
  bool noted = false;
  for (const auto& n : kept.notes)
    noted = noted || n == "2 of 5 rows left out: |diff_duration| below 40 us";
  EXPECT_TRUE(noted);

  s.row_limit = 2;
  AnalysisRows limited = SelectDiffRows(*rows, s);
  EXPECT_EQ(Names(limited), (std::vector<std::string>{"same", "new"}));
  EXPECT_EQ(limited.notes.back(), "2 of 3 rows shown (row limit)");

  // Sorted by a counts column, the floor is on |diff_counts|.
  DiffRowSelection counts;
  counts.sort = "test_counts";
  counts.min_change = 1;
  EXPECT_EQ(Names(SelectDiffRows(*rows, counts)),
            (std::vector<std::string>{"more", "less", "new"}));

  EXPECT_TRUE(CheckDiffSort("diff_counts").ok());
  Status bad = CheckDiffSort("duration");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("unknown sort 'duration' (name, diff_duration, diff_counts"),
            std::string::npos);
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
