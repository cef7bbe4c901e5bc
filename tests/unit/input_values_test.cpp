#include "engine/analysis/function_events/input_values.h"

#include <gtest/gtest.h>

namespace profsh {
namespace {

std::string Repr(std::string_view json) {
  return PythonRepr(ParseInputValue(json));
}

TEST(InputValues, ShapesAreListsOfIntegers) {
  const InputValue v = ParseInputValue("[[5,64,56,56],[64,64,3,3],[],[]]");
  ASSERT_EQ(v.type, InputValue::Type::kList);
  ASSERT_EQ(v.items.size(), 4u);
  ASSERT_EQ(v.items[0].items.size(), 4u);
  EXPECT_EQ(v.items[0].items[1].type, InputValue::Type::kInt);
  EXPECT_EQ(v.items[0].items[1].integer, 64);
  EXPECT_TRUE(v.items[3].items.empty());
  EXPECT_EQ(PythonRepr(v), "[[5, 64, 56, 56], [64, 64, 3, 3], [], []]");
  // A tensor list's input: a list of shapes.
  EXPECT_EQ(Repr("[[[2,3],[4,3]],[]]"), "[[[2, 3], [4, 3]], []]");
  EXPECT_EQ(Repr(" [ 1 , -2 ] "), "[1, -2]");
  EXPECT_EQ(Repr("[18446744073709551615, -9223372036854775808]"),
            "[18446744073709551615, -9223372036854775808]");
}

TEST(InputValues, PrintsAsPythonsStr) {
  EXPECT_EQ(Repr("[]"), "[]");
  EXPECT_EQ(Repr(R"(["a", true, false, null, 1.5])"), "['a', True, False, None, 1.5]");
  EXPECT_EQ(Repr(R"({"k": [1], "j": "v"})"), "{'k': [1], 'j': 'v'}");
  // Floats as Python's repr: shortest digits, positional for exponents -4..15.
  EXPECT_EQ(Repr("[1.0, 100, 100.0, 1e2, 0.1, 1e16, 1e15, 0.0001, 0.00001, -0.0, 1.5e300]"),
            "[1.0, 100, 100.0, 100.0, 0.1, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, "
            "1.5e+300]");
  EXPECT_EQ(Repr("[123456789012345678.0, 1e999]"), "[1.2345678901234568e+17, inf]");
}

// Escapes are decoded, then written back as Python writes them (issue 26: "\n" came out as "n").
TEST(InputValues, StringsDecodeTheirEscapesAndPrintPythonsQuotes) {
  EXPECT_EQ(Repr(R"(["a\nb"])"), R"(['a\nb'])");
  EXPECT_EQ(ParseInputValue(R"("a\nb")").text, "a\nb");
  EXPECT_EQ(Repr(R"(["tab\there", "back\\slash", "\r", "\u0001", "\u007f"])"),
            R"(['tab\there', 'back\\slash', '\r', '\x01', '\x7f'])");
  // Python picks double quotes for a text with a single quote and no double one.
  EXPECT_EQ(Repr(R"(["it's"])"), R"(["it's"])");
  EXPECT_EQ(Repr(R"(["it's \"x\""])"), R"(['it\'s "x"'])");
  EXPECT_EQ(Repr(R"(["say \"hi\""])"), R"(['say "hi"'])");
  // Printable characters stay; separators and controls beyond ASCII are escaped.
  EXPECT_EQ(Repr(R"(["café \u00e9", "\u00a0", "\u2028", "\ud83d\ude00"])"),
            "['café é', '\\xa0', '\\u2028', '\xF0\x9F\x98\x80']");
}

TEST(InputValues, TextThatIsNotJsonStaysText) {
  for (const char* bad : {"[1, 2", "[1,]", "[01]", "['a']", "[1] x", "", "[\"a\\q\"]", "[-]",
                          "{\"a\" 1}", "[\"\\u12\"]"}) {
    const InputValue v = ParseInputValue(bad);
    EXPECT_EQ(v.type, InputValue::Type::kText) << bad;
    EXPECT_EQ(PythonRepr(v), bad);
  }
  std::string deep(65, '[');
  deep += std::string(65, ']');
  EXPECT_EQ(ParseInputValue(deep).type, InputValue::Type::kText);
  std::string fine(64, '[');
  fine += std::string(64, ']');
  EXPECT_EQ(ParseInputValue(fine).type, InputValue::Type::kList);
}

TEST(InputValueTable, OneIdPerPrintedValue) {
  InputValueTable table;
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(PythonRepr(table.Get(0)), "[]");
  EXPECT_EQ(table.InternJson(7, "[]"), 0u);
  const uint32_t a = table.InternJson(8, "[[2,3],[]]");
  EXPECT_NE(a, 0u);
  EXPECT_EQ(table.InternJson(9, "[[2, 3], []]"), a);  // other text, same value
  EXPECT_EQ(table.InternJson(10, "[1e0]"), table.InternJson(11, "[1.0]"));
  EXPECT_NE(table.InternJson(12, "[1]"), table.InternJson(13, "[1.0]"));
  EXPECT_NE(table.InternJson(14, "[true]"), table.InternJson(15, "[1]"));
  EXPECT_NE(table.InternJson(16, "[0.0]"), table.InternJson(17, "[-0.0]"));
  EXPECT_NE(table.InternJson(18, R"(["1"])"), table.InternJson(19, "[1]"));
  EXPECT_NE(table.InternJson(20, "[[1],[2]]"), table.InternJson(21, "[[1,2]]"));
  // A text id already read is not read again.
  EXPECT_EQ(table.InternJson(8, "ignored"), a);
}

}  // namespace
}  // namespace profsh
