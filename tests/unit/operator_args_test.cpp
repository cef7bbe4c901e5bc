#include "engine/analysis/model/operator_args.h"

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace profsh {
namespace {

TEST(OperatorArgs, ReadsTheOperatorsAndMemoryRecordsArguments) {
  auto trace = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5,
     "args": {"Input Dims": [[2, 3]], "Input type": ["float"], "Concrete Inputs": [""],
              "Call stack": "a.py(1): f", "Sequence number": 4, "flops": 12}},
    {"ph": "X", "cat": "itt", "name": "task", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
     "args": {"domain": "dnnl"}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2,
     "args": {"Bytes": 64, "Device Type": 1}}]})json");
  OperatorArgs args(*trace);
  EXPECT_TRUE(args.any_inputs());
  EXPECT_TRUE(args.any_call_stack());
  EXPECT_TRUE(args.any_flops());
  const ArgRef op = trace->events.args(0), task = trace->events.args(1),
               memory = trace->events.args(2);
  const uint32_t schema = op.schema();
  ASSERT_TRUE(args.InputJson(schema, OperatorArgs::Input::kDims));
  EXPECT_EQ(trace->str(*args.InputJson(schema, OperatorArgs::Input::kDims)), "[[2,3]]");
  EXPECT_EQ(trace->str(*args.InputJson(schema, OperatorArgs::Input::kTypes)), "[\"float\"]");
  EXPECT_EQ(trace->str(*args.InputJson(schema, OperatorArgs::Input::kConcrete)), "[\"\"]");
  EXPECT_EQ(trace->str(*args.CallStack(schema)), "a.py(1): f");
  EXPECT_FALSE(args.IttDomain(schema));
  EXPECT_EQ(trace->str(*args.IttDomain(task.schema())), "dnnl");
  int64_t v = -1;
  EXPECT_TRUE(args.SequenceNumber(op, &v));
  EXPECT_EQ(v, 4);
  EXPECT_TRUE(args.Flops(op, &v));
  EXPECT_EQ(v, 12);
  EXPECT_TRUE(args.MemoryBytes(memory, &v));
  EXPECT_EQ(v, 64);
  EXPECT_TRUE(args.MemoryDeviceType(memory, &v));
  EXPECT_EQ(v, 1);
  EXPECT_FALSE(args.Flops(task, &v));
  EXPECT_TRUE(CarriesTorch2OperatorArguments(*trace));  // Concrete Inputs: torch 2.1 and later

  auto plain = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]})json");
  OperatorArgs none(*plain);
  EXPECT_FALSE(none.any_inputs());
  EXPECT_FALSE(none.any_call_stack());
  EXPECT_FALSE(none.any_flops());
  EXPECT_FALSE(CarriesTorch2OperatorArguments(*plain));
}

}  // namespace
}  // namespace profsh
