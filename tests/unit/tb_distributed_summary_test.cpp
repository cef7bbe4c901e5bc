// The TensorBoard plugin's distributed view (engine/analysis/tensorboard/distributed_summary.h):
// a worker's collectives with their bytes and kernels, the computation/communication overlap
// per step, and the data transfer time as each collective's shortest duration over the workers.
#include "engine/analysis/tensorboard/distributed_summary.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace profsh::tensorboard {
namespace {

TEST(TbDistributedSummary, CollectivesWithTheirKernelsAndBytes) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 1, "tid": 1, "ts": 10,
     "dur": 5, "args": {"External id": 7, "Input Dims": [[2, 3], []],
                        "Input type": ["float", "int"]}},
    {"ph": "X", "cat": "cpu_op", "name": "nccl:broadcast", "pid": 1, "tid": 1, "ts": 2,
     "dur": 1, "args": {"External id": 8, "Input Dims": [[4]], "Input type": ["c10::Half"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20, "dur": 1,
     "args": {"External id": 9}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7, "ts": 30,
     "dur": 20, "args": {"External id": 7, "correlation": 1, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 60,
     "dur": 2, "args": {"External id": 9, "correlation": 2, "device": 0, "stream": 7}}
  ]})json");
  const std::vector<CommunicationOp> ops = CommunicationOpsOf(ModelOf(*t));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "nccl:broadcast");  // by start
  EXPECT_EQ(ops[0].bytes, 8);
  ASSERT_EQ(ops[1].kernel_ranges.size(), 2u);  // its own range, then its kernel
  EXPECT_EQ(ops[1].kernel_ranges[1].ts, 30'000);
  EXPECT_EQ(ops[1].kernel_ranges[1].end, 50'000);
  EXPECT_EQ(ops[1].bytes, 2 * 3 * 4 + 4);  // a 0-d int counts one element
}

TEST(TbDistributedSummary, NoCollectivesWhenBothLibrariesAreUsed) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 1, "tid": 1, "ts": 10,
     "dur": 5, "args": {"External id": 1}},
    {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 1, "tid": 1,
     "ts": 20, "dur": 5, "args": {"External id": 2}}
  ]})json");
  EXPECT_TRUE(CommunicationOpsOf(ModelOf(*t)).empty());
}

// Two workers, two steps each. Worker a: step 1 [0, 100) with computation [0, 60) and
// communication [50, 80); step 2 [100, 200) with communication [120, 150). Worker b: the same
// collectives, each shorter.
std::vector<DistributedWorker> TwoWorkers() {
  DistributedWorker a{"worker0",
                      {"1", "2"},
                      {{0, 100}, {100, 200}},
                      {{0, 60}},
                      {{50, 80}, {120, 150}},
                      {{"gloo:all_reduce", 50, 80, 16, {{50, 80}}},
                       {"gloo:all_reduce", 120, 150, 16, {{120, 150}}}}};
  DistributedWorker b{"worker1",
                      {"1", "2"},
                      {{0, 100}, {100, 200}},
                      {{0, 70}},
                      {{70, 80}, {130, 150}},
                      {{"gloo:all_reduce", 70, 80, 16, {{70, 80}}},
                       {"gloo:all_reduce", 130, 150, 16, {{130, 150}}}}};
  return {b, a};  // the summary orders workers by name
}

const WorkerStepFigures& Figures(const DistributedSummary& s, const std::string& step,
                                 const std::string& worker) {
  for (const WorkerStepFigures& f : s.steps)
    if (f.step == step && f.worker == worker) return f;
  throw std::runtime_error("no figures for " + worker + " step " + step);
}

TEST(TbDistributedSummary, OverlapPerStepAndItsMean) {
  const DistributedSummary s = BuildDistributedSummary(TwoWorkers());
  ASSERT_TRUE(s.notes.empty());
  ASSERT_EQ(s.steps.size(), 6u);
  EXPECT_EQ(s.steps[0].step, "all");
  EXPECT_EQ(s.steps[0].worker, "worker0");
  const WorkerStepFigures& a1 = Figures(s, "1", "worker0");
  EXPECT_EQ(a1.computation, 50);    // [0, 50)
  EXPECT_EQ(a1.overlapping, 10);    // [50, 60)
  EXPECT_EQ(a1.communication, 20);  // [60, 80)
  EXPECT_EQ(a1.other, 20);
  const WorkerStepFigures& a2 = Figures(s, "2", "worker0");
  EXPECT_EQ(a2.computation, 0);
  EXPECT_EQ(a2.communication, 30);
  EXPECT_EQ(a2.other, 70);
  const WorkerStepFigures& all = Figures(s, "all", "worker0");
  EXPECT_EQ(all.communication, 25);
  EXPECT_EQ(all.other, 45);
}

TEST(TbDistributedSummary, DataTransferIsTheShortestDurationOverWorkers) {
  const DistributedSummary s = BuildDistributedSummary(TwoWorkers());
  // Collective 1 lasts 30 on worker0 and 10 on worker1: worker0 waited 20.
  const WorkerStepFigures& a1 = Figures(s, "1", "worker0");
  EXPECT_EQ(a1.data_transfer, 10);
  EXPECT_EQ(a1.synchronizing, 20);
  EXPECT_EQ(Figures(s, "1", "worker1").synchronizing, 0);
  EXPECT_EQ(Figures(s, "2", "worker0").data_transfer, 20);
  EXPECT_EQ(Figures(s, "2", "worker0").synchronizing, 10);
  EXPECT_EQ(Figures(s, "all", "worker0").synchronizing, 15);
  ASSERT_EQ(s.ops.size(), 2u);
  EXPECT_EQ(s.ops[0].worker, "worker0");
  EXPECT_EQ(s.ops[0].calls, 2);
  EXPECT_EQ(s.ops[0].bytes, 32);
  EXPECT_EQ(s.ops[0].latency, 60);
  EXPECT_EQ(s.ops[0].data_transfer, 30);
  const DistributedSummaryRows rows = DistributedSummaryAsRows(s);
  EXPECT_EQ(rows.ops.rows.size(), 2u);
  EXPECT_EQ(rows.steps.rows.size(), 6u);
}

TEST(TbDistributedSummary, NoViewWhenWorkersDisagreeOnTheirCollectives) {
  std::vector<DistributedWorker> w = TwoWorkers();
  w[0].ops.pop_back();
  const DistributedSummary s = BuildDistributedSummary(std::move(w));
  EXPECT_TRUE(s.steps.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("another number of collectives"), std::string::npos);
}

}  // namespace
}  // namespace profsh::tensorboard
