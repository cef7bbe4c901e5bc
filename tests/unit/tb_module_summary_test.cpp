// The TensorBoard plugin's module view (engine/analysis/tensorboard/module_summary.h): the
// module tree from the python_function ids, identical trees of two steps shown once, host and
// device time per module.
#include "engine/analysis/tensorboard/module_summary.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace profsh::tensorboard {
namespace {

// Two calls of Net_0 (Python ids 1 and 11), each calling Linear_0 through Net_0's forward
// function; Linear_0's aten::linear launches a 40 µs kernel in the first call only.
const char kTrace[] = R"json({"traceEvents": [
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Net_0", "pid": 1, "tid": 1, "ts": 0,
   "dur": 100, "args": {"Python id": 1, "Python parent id": 0, "Python module id": 7}},
  {"ph": "X", "cat": "python_function", "name": "net.py(3): forward", "pid": 1, "tid": 1,
   "ts": 1, "dur": 98, "args": {"Python id": 2, "Python parent id": 1}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1,
   "ts": 10, "dur": 50, "args": {"Python id": 3, "Python parent id": 2, "Python module id": 8}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 20, "dur": 30,
   "args": {"External id": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 25,
   "dur": 10, "args": {"External id": 5, "correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 40, "dur": 40,
   "args": {"External id": 5, "correlation": 9, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Net_0", "pid": 1, "tid": 1,
   "ts": 200, "dur": 100, "args": {"Python id": 11, "Python parent id": 0, "Python module id": 7}},
  {"ph": "X", "cat": "python_function", "name": "net.py(3): forward", "pid": 1, "tid": 1,
   "ts": 201, "dur": 98, "args": {"Python id": 12, "Python parent id": 11}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1,
   "ts": 210, "dur": 50, "args": {"Python id": 13, "Python parent id": 12, "Python module id": 8}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 220, "dur": 30,
   "args": {"External id": 6}}
]})json";

TEST(TbModuleSummary, TreeFromPythonIdsWithHostAndDeviceTime) {
  auto t = testing::MustImport(kTrace);
  const ModuleSummary s = BuildModuleSummary(*t);
  ASSERT_EQ(s.roots.size(), 1u);  // the two calls' trees are the same tree
  const ModuleStats& net = s.roots[0];
  EXPECT_EQ(net.name, "Net_0");
  EXPECT_EQ(net.module_id, 7);
  EXPECT_EQ(net.occurrences, 2);
  EXPECT_EQ(net.operators, 0);
  EXPECT_EQ(net.host_duration, 200'000);
  EXPECT_EQ(net.self_host_duration, 100'000);  // less Linear_0's ranges (python forward is no node)
  EXPECT_EQ(net.device_duration, 40'000);
  ASSERT_EQ(net.children.size(), 1u);
  const ModuleStats& linear = net.children[0];
  EXPECT_EQ(linear.name, "Linear_0");
  EXPECT_EQ(linear.operators, 2);
  EXPECT_EQ(linear.self_host_duration, 40'000);
  EXPECT_EQ(linear.device_duration, 40'000);
  EXPECT_EQ(linear.self_device_duration, 40'000);
  EXPECT_EQ(linear.avg_duration, 20'000);  // device time per occurrence
  const AnalysisRows rows = ModuleSummaryRows(s);
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.rows.cell(1, rows.Column("depth")).int_value, 1);
}

TEST(TbModuleSummary, NothingWithoutModuleIds) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "python_function", "name": "net.py(3): forward", "pid": 1, "tid": 1,
     "ts": 1, "dur": 98, "args": {"Python id": 2, "Python parent id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 20, "dur": 30}
  ]})json");
  const ModuleSummary s = BuildModuleSummary(*t);
  EXPECT_TRUE(s.roots.empty());
  EXPECT_EQ(ModuleSummaryRows(s).notes.size(), 1u);
}

}  // namespace
}  // namespace profsh::tensorboard
