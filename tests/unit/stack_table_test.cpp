#include "engine/analysis/function_events/stack_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace profsh {
namespace {

TEST(StackTable, EachStackOnceAndTheEmptyStackIsZero) {
  StackTable stacks;
  EXPECT_EQ(stacks.Intern({}), 0u);
  EXPECT_TRUE(stacks.Get(0).empty());
  std::vector<uint32_t> ids;
  // Enough stacks to grow the table several times; each keeps its id.
  for (uint32_t k = 0; k < 500; ++k) ids.push_back(stacks.Intern({k, k + 1, 7}));
  for (uint32_t k = 0; k < 500; ++k) {
    EXPECT_EQ(stacks.Intern({k, k + 1, 7}), ids[k]);
    EXPECT_EQ(stacks.Get(ids[k]), (std::vector<uint32_t>{k, k + 1, 7}));
  }
  EXPECT_NE(stacks.Intern({1, 2}), stacks.Intern({2, 1}));
  EXPECT_EQ(stacks.size(), 503u);
}

}  // namespace
}  // namespace profsh
