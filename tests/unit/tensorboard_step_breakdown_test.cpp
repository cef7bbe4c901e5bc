// The TensorBoard plugin's step breakdown on small synthetic traces (docs/ANALYSIS.md,
// "TensorBoard views"): the category priority, steps widened to their device work, trailing
// steps dropped, the step of a trace without ProfilerStep ranges, collectives, the average.
#include "engine/analysis/tensorboard/step_breakdown.h"

#include <gtest/gtest.h>

#include "engine/analysis/gpu_intervals.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

std::string Trace(const std::string& events) {
  return "{\"traceEvents\": [" + events + "]}";
}

std::string Event(const std::string& cat, const std::string& name, int ts, int dur,
                  const std::string& args = "{}", int pid = 1, int tid = 1) {
  return "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
         "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
         ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
         ", \"args\": " + args + "}";
}

std::string Launch(int ts, int dur, int correlation) {
  return Event("cuda_runtime", "cudaLaunchKernel", ts, dur,
               "{\"correlation\": " + std::to_string(correlation) + "}");
}

std::string Kernel(const std::string& name, int ts, int dur, int correlation,
                   const std::string& more = "") {
  return Event("kernel", name, ts, dur,
               "{\"correlation\": " + std::to_string(correlation) +
                   ", \"device\": 0, \"stream\": 7" + more + "}",
               0, 7);
}

constexpr size_t kKernel = 0, kMemcpy = 1, kMemset = 2, kCommunication = 3, kRuntime = 4,
                 kDataLoader = 5, kCpuExec = 6, kOther = 7;

// One step, 0..100 µs: the kernel (10..30) first, then the copy's part outside it (30..40),
// the launch's part before the kernel (5..10), the data loader (60..70), the operator's part
// nothing earlier covers (0..5, 40..50); the rest is other.
const std::string kOneStep = Trace(
    Event("cpu_op", "ProfilerStep#3", 0, 100) + "," + Event("cpu_op", "aten::add", 0, 50) + "," +
    Launch(5, 10, 1) + "," + Kernel("k", 10, 20, 1) + "," +
    Event("cuda_runtime", "cudaMemcpyAsync", 16, 2, "{\"correlation\": 2}") + "," +
    Event("gpu_memcpy", "Memcpy HtoD", 20, 20, "{\"correlation\": 2, \"device\": 0}", 0, 7) + "," +
    Event("cpu_op", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 60, 10));

TEST(TensorBoardStepBreakdown, EachMomentCountsForTheFirstCategoryBusyThen) {
  auto trace = MustImport(kOneStep);
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  ASSERT_EQ(b.steps.size(), 1u);
  const StepTimes& s = b.steps[0];
  EXPECT_EQ(s.step, "3");
  EXPECT_DOUBLE_EQ(s.us[kKernel], 20);
  EXPECT_DOUBLE_EQ(s.us[kMemcpy], 10);
  EXPECT_DOUBLE_EQ(s.us[kMemset], 0);
  EXPECT_DOUBLE_EQ(s.us[kCommunication], 0);
  EXPECT_DOUBLE_EQ(s.us[kRuntime], 5);
  EXPECT_DOUBLE_EQ(s.us[kDataLoader], 10);
  EXPECT_DOUBLE_EQ(s.us[kCpuExec], 15);
  EXPECT_DOUBLE_EQ(s.us[kOther], 40);
  EXPECT_DOUBLE_EQ(s.total_us, 100);
  EXPECT_TRUE(b.notes.empty());
}

TEST(TensorBoardStepBreakdown, StepsFollowTheirDeviceWorkAndTrailingStepsGo) {
  // Step 4's kernel ends at 250, after its host range: the step ends there and step 5 starts
  // there. Step 5 launches nothing: the plugin drops it as cut short.
  auto trace =
      MustImport(Trace(Event("cpu_op", "ProfilerStep#3", 0, 100) + "," + Launch(10, 5, 1) + "," +
                       Kernel("k", 20, 10, 1) + "," + Event("cpu_op", "ProfilerStep#4", 100, 100) +
                       "," + Launch(150, 5, 2) + "," + Kernel("k", 190, 60, 2) + "," +
                       Event("cpu_op", "ProfilerStep#5", 200, 100)));
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  ASSERT_EQ(b.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(b.steps[0].total_us, 100);
  EXPECT_EQ(b.steps[1].step, "4");
  EXPECT_DOUBLE_EQ(b.steps[1].total_us, 150);  // 100..250
  EXPECT_DOUBLE_EQ(b.steps[1].us[kKernel], 60);
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_NE(b.notes[0].find("last 1 step"), std::string::npos);
}

TEST(TensorBoardStepBreakdown, ALastStepWithUnder80PercentOfTheKernelsBeforeGoes) {
  std::string events =
      Event("cpu_op", "ProfilerStep#1", 0, 100) + "," + Event("cpu_op", "ProfilerStep#2", 100, 100);
  int correlation = 1;
  for (int i = 0; i < 5; ++i, ++correlation)
    events +=
        "," + Launch(10 + 10 * i, 2, correlation) + "," + Kernel("k", 12 + 10 * i, 2, correlation);
  for (int i = 0; i < 3; ++i, ++correlation)
    events += "," + Launch(110 + 10 * i, 2, correlation) + "," +
              Kernel("k", 112 + 10 * i, 2, correlation);
  auto three_of_five = MustImport(Trace(events));
  EXPECT_EQ(ComputeStepBreakdown(*three_of_five).steps.size(), 1u);
  // A fourth kernel in step 2 reaches 80 %: both steps stay.
  events += "," + Launch(150, 2, 99) + "," + Kernel("k", 152, 2, 99);
  auto four_of_five = MustImport(Trace(events));
  EXPECT_EQ(ComputeStepBreakdown(*four_of_five).steps.size(), 2u);
}

TEST(TensorBoardStepBreakdown, WithoutProfilerStepsOneStepSpansTheCpuOperators) {
  auto trace = MustImport(Trace(Event("cpu_op", "aten::add", 10, 30) + "," +
                                Event("user_annotation", "mine", 0, 100) + "," +
                                Event("cpu_op", "aten::mul", 50, 20)));
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].step, "0");
  EXPECT_DOUBLE_EQ(b.steps[0].total_us, 60);      // 10..70: annotations do not widen it
  EXPECT_DOUBLE_EQ(b.steps[0].us[kCpuExec], 60);  // the annotation is CPU execution too
  ASSERT_FALSE(b.notes.empty());
}

TEST(TensorBoardStepBreakdown, CollectivesAndTheirKernelsAreCommunication) {
  auto trace = MustImport(Trace(
      Event("cpu_op", "ProfilerStep#1", 0, 100) + "," +
      Event("cpu_op", "nccl:all_reduce", 10, 20, "{\"External id\": 7}") + "," +
      Event("cuda_runtime", "cudaLaunchKernel", 15, 5, "{\"correlation\": 1, \"External id\": 7}") +
      "," + Kernel("ncclKernel_AllReduce", 40, 30, 1, ", \"External id\": 7")));
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(b.steps[0].us[kKernel], 0);
  // The kernel (40..70) and the operator (10..30), launch included: communication comes first.
  EXPECT_DOUBLE_EQ(b.steps[0].us[kCommunication], 50);
  EXPECT_DOUBLE_EQ(b.steps[0].us[kRuntime], 0);
}

TEST(TensorBoardStepBreakdown, TheAverageIsTheMeanStepWithPercentages) {
  auto trace = MustImport(Trace(Event("cpu_op", "ProfilerStep#1", 0, 100) + "," +
                                Event("cpu_op", "aten::add", 0, 50) + "," +
                                Event("cpu_op", "ProfilerStep#2", 100, 300)));
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  ASSERT_EQ(b.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(b.average.total_us, 200);
  EXPECT_DOUBLE_EQ(b.average.us[kCpuExec], 25);
  EXPECT_DOUBLE_EQ(b.average.us[kOther], 175);
  EXPECT_DOUBLE_EQ(b.average_pct[kCpuExec], 12.5);
  EXPECT_DOUBLE_EQ(b.average_pct[kOther], 87.5);
  const AnalysisRows avg = StepBreakdownAverageRows(b);
  ASSERT_EQ(avg.rows.size(), 1u);
  EXPECT_EQ(avg.rows.cell(0, avg.Column("step")).text, "average");
  EXPECT_DOUBLE_EQ(avg.rows.cell(0, avg.Column("cpu_exec_pct")).double_value, 12.5);
  const AnalysisRows rows = StepBreakdownRows(b);
  EXPECT_EQ(rows.columns,
            (std::vector<std::string>{"step", "kernel", "memcpy", "memset", "communication",
                                      "runtime", "dataloader", "cpu_exec", "other", "total"}));
}

TEST(TensorBoardStepBreakdown, CategoriesOutsideThePluginsListAreLeftOut) {
  // cuda_driver calls are no runtime to the plugin, nvtx ranges no operators.
  auto trace = MustImport(Trace(Event("cpu_op", "ProfilerStep#1", 0, 100) + "," +
                                Event("cuda_driver", "cuLaunchKernel", 10, 10) + "," +
                                Event("nvtx", "range", 30, 10)));
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(b.steps[0].us[kRuntime], 0);
  EXPECT_DOUBLE_EQ(b.steps[0].us[kCpuExec], 0);
  EXPECT_DOUBLE_EQ(b.steps[0].us[kOther], 100);
}

TEST(TensorBoardStepBreakdown, NoEventsNoSteps) {
  auto trace = MustImport(Trace(Event("kernel", "k", 0, 10, "{\"device\": 0}", 0, 7)));
  const StepBreakdown b = ComputeStepBreakdown(*trace);
  EXPECT_TRUE(b.steps.empty());
  EXPECT_TRUE(StepBreakdownAverageRows(b).rows.empty());
  ASSERT_EQ(b.notes.size(), 1u);
}

TEST(GpuIntervals, IntersectAndSubtract) {
  const std::vector<Interval> a = {{0, 10}, {20, 30}}, b = {{5, 25}, {28, 40}};
  const std::vector<Interval> both = IntersectIntervals(a, b);
  ASSERT_EQ(both.size(), 3u);
  EXPECT_EQ(both[0].ts, 5);
  EXPECT_EQ(both[0].end, 10);
  EXPECT_EQ(both[1].ts, 20);
  EXPECT_EQ(both[1].end, 25);
  EXPECT_EQ(both[2].ts, 28);
  EXPECT_EQ(both[2].end, 30);
  const std::vector<Interval> left = SubtractIntervals(a, b);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].ts, 0);
  EXPECT_EQ(left[0].end, 5);
  EXPECT_EQ(left[1].ts, 25);
  EXPECT_EQ(left[1].end, 28);
  EXPECT_TRUE(SubtractIntervals(a, {{-5, 50}}).empty());
  EXPECT_EQ(UnionLength(SubtractIntervals(a, {})), 20);
}

}  // namespace
}  // namespace profsh
