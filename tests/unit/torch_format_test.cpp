#include "engine/analysis/function_events/torch_format.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/analysis/function_events/torch_filters.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

// Expected values are Python's a / 1000 (repr), which torch 2.x computes on times since the
// epoch; dividing a double of a would round twice (721975183875161.1 for the first one).
TEST(TorchFormat, PythonDivide1000RoundsOnceAsPythonDoes) {
  EXPECT_EQ(PythonDivide1000(721975183875161028), 721975183875161.0);
  EXPECT_EQ(PythonDivide1000(848362767697851452), 848362767697851.5);
  EXPECT_EQ(PythonDivide1000(1665384136574097571), 1665384136574097.5);
  EXPECT_EQ(PythonDivide1000(1700000000123456789), 1700000000123456.8);
  EXPECT_EQ(PythonDivide1000(-1700000000123456789), -1700000000123456.8);
  EXPECT_EQ(PythonDivide1000(9007199254740993000), 9007199254740992.0);
  EXPECT_EQ(PythonDivide1000(123456789), 123456.789);
  EXPECT_EQ(PythonDivide1000(1), 0.001);
  EXPECT_EQ(PythonDivide1000(0), 0.0);
  EXPECT_EQ(PythonDivide1000(INT64_MIN), -9223372036854776.0);
  EXPECT_EQ(PythonDivide1000(INT64_MAX), 9223372036854776.0);
}

TEST(TorchFormat, TraceStartIsTheProfilerSpanElseTheFirstEvent) {
  auto with_span = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": 1, "tid": 1, "ts": 7,
     "dur": 100}]})json");
  EXPECT_EQ(TorchTraceStartNs(*with_span), 7000);
  auto without = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 9, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1}]})json");
  EXPECT_EQ(TorchTraceStartNs(*without), 3000);
  auto empty = testing::MustImport(R"json({"traceEvents": []})json");
  EXPECT_EQ(TorchTraceStartNs(*empty), 0);
}

TEST(TorchFilters, NamesAndFramesTorchLeavesOut) {
  EXPECT_TRUE(IsFilteredName("aten::is_leaf"));
  EXPECT_TRUE(IsFilteredName("[memory]"));
  EXPECT_TRUE(IsFilteredName("profiler::_record_function_enter_new"));
  EXPECT_FALSE(IsFilteredName("aten::mm"));
  EXPECT_FALSE(KeepStackFrame("torch/autograd/__init__.py(173): backward"));
  EXPECT_FALSE(KeepStackFrame("torch/tensor.py(1): backward"));
  EXPECT_TRUE(KeepStackFrame("torch/autograd/__init__.py(20): grad"));
  EXPECT_TRUE(KeepStackFrame("train.py(12): step"));
}

}  // namespace
}  // namespace profsh
