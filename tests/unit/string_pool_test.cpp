#include "engine/util/string_pool.h"

#include <gtest/gtest.h>

#include <string>

namespace profsh {
namespace {

TEST(StringPool, EmptyStringIsIdZero) {
  StringPool pool;
  EXPECT_EQ(pool.Intern(""), 0u);
  EXPECT_EQ(pool.Get(0), "");
}

TEST(StringPool, InternsOnce) {
  StringPool pool;
  uint32_t a = pool.Intern("aten::add");
  uint32_t b = pool.Intern("aten::mul");
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.Intern("aten::add"), a);
  EXPECT_EQ(pool.Get(a), "aten::add");
  EXPECT_EQ(pool.Find("aten::mul"), b);
  EXPECT_FALSE(pool.Find("aten::sub").has_value());
}

TEST(StringPool, KeepsStringsValidWhileGrowing) {
  StringPool pool;
  std::vector<uint32_t> ids;
  for (int i = 0; i < 200000; ++i) ids.push_back(pool.Intern("name_" + std::to_string(i)));
  std::string big(600000, 'x');  // larger than a block: stored on its own
  uint32_t big_id = pool.Intern(big);
  for (int i = 0; i < 200000; i += 997) {
    EXPECT_EQ(pool.Get(ids[i]), "name_" + std::to_string(i));
    EXPECT_EQ(pool.Intern("name_" + std::to_string(i)), ids[i]);
  }
  EXPECT_EQ(pool.Get(big_id), big);
  uint32_t after = pool.Intern("after the big one");
  EXPECT_EQ(after, pool.size() - 1);
  EXPECT_EQ(pool.Get(after), "after the big one");
}

// Blocks start small and double: strings of every size up to the large-string cut, each bigger
// than the block being filled at some point, stay whole and NUL-terminated.
TEST(StringPool, StringsOfEverySizeSpanGrowingBlocks) {
  StringPool pool;
  std::vector<std::pair<uint32_t, std::string>> kept;
  for (size_t size = 1; size < 300000; size = size * 3 / 2 + 1) {
    for (char c : {'a', 'b'}) {
      std::string text(size, c);
      kept.emplace_back(pool.Intern(text), text);
    }
  }
  for (const auto& [id, text] : kept) {
    EXPECT_EQ(pool.Get(id), text);
    EXPECT_EQ(pool.Get(id).data()[text.size()], '\0');
  }
}

TEST(StringPool, EmbeddedNulsAreDistinct) {
  StringPool pool;
  uint32_t a = pool.Intern(std::string_view("a\0b", 3));
  uint32_t b = pool.Intern(std::string_view("a\0c", 3));
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.Get(a).size(), 3u);
}

}  // namespace
}  // namespace profsh
