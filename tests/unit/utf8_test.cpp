#include "engine/util/utf8.h"

#include <gtest/gtest.h>

namespace profsh {
namespace {

TEST(Utf8, LengthCountsCodePoints) {
  EXPECT_EQ(Utf8Length("abc"), 3u);
  EXPECT_EQ(Utf8Length("注意力"), 3u);
  EXPECT_EQ(Utf8Length("ünï"), 3u);
}

TEST(Utf8, PrefixAndDropPrefixSplitOnCodePoints) {
  EXPECT_EQ(Utf8Prefix("注意力块", 2), "注意");
  EXPECT_EQ(Utf8DropPrefix("注意力块", 2), "力块");
  EXPECT_EQ(Utf8Prefix("ab", 5), "ab");
  EXPECT_EQ(Utf8DropPrefix("ab", 5), "");
}

TEST(Utf8, FindsInvalidSequences) {
  EXPECT_EQ(Utf8FirstInvalid("plain ascii"), std::string_view::npos);
  EXPECT_EQ(Utf8FirstInvalid("ok \xe6\xb3\xa8"), std::string_view::npos);
  EXPECT_EQ(Utf8FirstInvalid("bad \xff here"), 4u);
  EXPECT_EQ(Utf8FirstInvalid("cut \xe6\xb3"), 4u);
  EXPECT_EQ(Utf8FirstInvalid("overlong \xc0\xaf"), 9u);
  EXPECT_EQ(Utf8FirstInvalid("surrogate \xed\xa0\x80"), 10u);
}

TEST(Utf8, AppendEncodes) {
  std::string s;
  AppendUtf8(s, U'é');
  AppendUtf8(s, U'注');
  AppendUtf8(s, U'😀');
  EXPECT_EQ(s, "é注😀");
}

}  // namespace
}  // namespace profsh
