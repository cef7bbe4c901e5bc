// The cursor the trace model reads its small JSON texts with (list arguments, deviceProperties):
// every kind of value, escapes, and malformed text, which must stop it without reading past the
// text (ASan checks the reads of the truncated cases).
#include "engine/util/json_cursor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace profsh::json {
namespace {

TEST(JsonCursor, ReadsStringsWithEveryEscape) {
  Cursor in(R"( "a\"b\\c\/d\b\f\n\r\t" "\u00e9\ud83d\ude00" )");
  EXPECT_EQ(in.String(), std::optional<std::string>("a\"b\\c/d\b\f\n\r\t"));
  EXPECT_EQ(in.String(), std::optional<std::string>("\xc3\xa9\xf0\x9f\x98\x80"));
  EXPECT_TRUE(in.AtEnd());
}

TEST(JsonCursor, StringLeavesOtherValuesUnread) {
  Cursor in("12");
  EXPECT_EQ(in.String(), std::nullopt);
  EXPECT_EQ(in.Int(), std::optional<int64_t>(12));
}

TEST(JsonCursor, IntSkipsFractionsAndOtherValues) {
  Cursor in(R"([1, -2, 3.5, 4e2, "5", null, 9223372036854775807])");
  std::vector<std::optional<int64_t>> got;
  EXPECT_TRUE(in.List([&] { got.push_back(in.Int()); }));
  const std::vector<std::optional<int64_t>> want = {
      1, -2, std::nullopt, std::nullopt, std::nullopt, std::nullopt, INT64_C(9223372036854775807)};
  EXPECT_EQ(got, want);
}

TEST(JsonCursor, SkipsNestedValues) {
  Cursor in(R"({"a": [1, {"b": "]}"}], "c": {}} , true)");
  EXPECT_TRUE(in.Skip());
  EXPECT_TRUE(in.Consume(','));
  EXPECT_TRUE(in.Skip());
  EXPECT_TRUE(in.AtEnd());
}

TEST(JsonCursor, ListOfListsAndEmptyList) {
  Cursor in("[[1,2],[],[3]]");
  std::vector<std::vector<int64_t>> got;
  EXPECT_TRUE(in.List([&] {
    got.emplace_back();
    in.List([&] { got.back().push_back(*in.Int()); });
  }));
  EXPECT_EQ(got, (std::vector<std::vector<int64_t>>{{1, 2}, {}, {3}}));
  Cursor empty("[ ]");
  EXPECT_TRUE(empty.List([] { FAIL() << "no items"; }));
}

TEST(JsonCursor, AnItemNobodyReadsIsSkippedNotLoopedOn) {
  Cursor in(R"(["x", 1, [2]])");
  int items = 0;
  EXPECT_TRUE(in.List([&] { ++items; }));
  EXPECT_EQ(items, 3);
}

// Each truncation or bad escape ends the read; copies on the heap so that ASan sees a read
// past the text.
TEST(JsonCursor, MalformedTextStopsInsideTheText) {
  for (const char* text : {R"("abc)", R"("a\)", R"("\u12)", R"("\u12")", R"("\q")", "[1,", "[\"a\"",
                           "{\"a\" 1}", "{\"a\":", "[", ""}) {
    const std::string s(text);
    auto copy = std::make_unique<char[]>(s.size());
    std::copy(s.begin(), s.end(), copy.get());
    Cursor in(std::string_view(copy.get(), s.size()));
    EXPECT_FALSE(in.Skip() && in.AtEnd()) << text;
  }
  Cursor bad(R"("\u12")");
  EXPECT_EQ(bad.String(), std::nullopt);
}

}  // namespace
}  // namespace profsh::json
