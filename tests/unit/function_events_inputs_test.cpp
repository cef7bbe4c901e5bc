// Operators' recorded inputs through the operator view: typed values per event, rows grouped by
// them, and the table's Input Shapes column as torch prints it.
#include <gtest/gtest.h>

#include <string>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

std::string Op(const std::string& name, int ts, const std::string& args) {
  return R"({"ph": "X", "cat": "cpu_op", "name": ")" + name + R"(", "pid": 1, "tid": 1, "ts": )" +
         std::to_string(ts) + R"(, "dur": 5, "args": )" + args + "}";
}

std::string TraceOf(std::initializer_list<std::string> events) {
  std::string s = R"({"traceEvents": [)";
  bool first = true;
  for (const std::string& e : events) {
    s += (first ? "" : ",") + e;
    first = false;
  }
  return s + "]}";
}

TEST(FunctionEventsInputs, ShapesTypesAndConcreteInputsAreTypedValues) {
  auto trace = testing::MustImport(
      TraceOf({Op("aten::cat", 0,
                  R"({"Input Dims": [[[2, 3], [4, 3]], []], "Input type": ["TensorList", "Scalar"],
              "Concrete Inputs": ["", "0"]})"),
               Op("aten::relu", 10, R"({"Input Dims": [[7]]})"), Op("aten::empty", 20, "{}")}));
  auto fe = BuildFunctionEvents(*trace);
  ASSERT_EQ(fe->size(), 3u);
  const InputValue& cat = fe->inputs.Get(fe->input_shapes(0));
  ASSERT_EQ(cat.items.size(), 2u);
  ASSERT_EQ(cat.items[0].items.size(), 2u);  // the tensor list: two shapes
  EXPECT_EQ(cat.items[0].items[1].items[0].integer, 4);
  EXPECT_EQ(PythonRepr(fe->inputs.Get(fe->input_types(0))), "['TensorList', 'Scalar']");
  EXPECT_EQ(PythonRepr(fe->inputs.Get(fe->concrete_inputs(0))), "['', '0']");
  EXPECT_EQ(PythonRepr(fe->inputs.Get(fe->input_shapes(1))), "[[7]]");
  EXPECT_EQ(fe->input_types(1), 0u);  // not recorded: []
  EXPECT_EQ(fe->input_shapes(2), 0u);

  KeyAverages avg = ComputeKeyAverages(std::move(fe), true, 0);
  ASSERT_EQ(avg.rows.size(), 3u);
  EXPECT_EQ(avg.rows[0].input_shapes, avg.events->input_shapes(0));
  EXPECT_EQ(avg.rows[0].input_types, avg.events->input_types(0));
  EXPECT_EQ(avg.rows[0].concrete_inputs, avg.events->concrete_inputs(0));
  auto text = BuildAveragesTable(avg, TableOptions{});
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text.value().find("  [[[2, 3], [4, 3]], []]  "), std::string::npos) << text.value();
  EXPECT_NE(text.value().find("  [[7]]  "), std::string::npos);
}

// Rows by input shape are torch's rows by str(input_shapes): texts that print alike share one.
TEST(FunctionEventsInputs, RowsByShapeFollowThePrintedValue) {
  auto trace =
      testing::MustImport(TraceOf({Op("op", 0, R"({"Input Dims": [[1.0]], "Ev Idx": 0})"),
                                   Op("op", 10, R"({"Input Dims": [[1e0]], "Ev Idx": 1})"),
                                   Op("op", 20, R"({"Input Dims": [[1]], "Ev Idx": 2})")}));
  KeyAverages avg = ComputeKeyAverages(BuildFunctionEvents(*trace), true, 0);
  ASSERT_EQ(avg.rows.size(), 2u);
  EXPECT_EQ(avg.rows[0].count, 2);
  EXPECT_EQ(avg.rows[1].count, 1);
}

// Issue 26: the table decoded "\n" in a recorded string as "n", and quoted as Python does not.
TEST(FunctionEventsInputs, TablePrintsStringsAsPythonsStr) {
  auto trace =
      testing::MustImport(TraceOf({Op("op", 0, R"({"Input Dims": [["a\nb", "it's"], [2]]})")}));
  KeyAverages avg = ComputeKeyAverages(BuildFunctionEvents(*trace), true, 0);
  auto text = BuildAveragesTable(avg, TableOptions{});
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text.value().find(R"([['a\nb', "it's"], [2]])"), std::string::npos) << text.value();
}

}  // namespace
}  // namespace profsh
