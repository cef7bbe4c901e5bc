#include "engine/analysis/function_events/id_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/util/parallel.h"

namespace profsh {
namespace {

IdIndex IndexOf(const std::vector<int64_t>& wanted) {
  return IdIndex([&](auto&& f) {
    for (int64_t id : wanted) f(id);
  });
}

TEST(IdIndex, KeepsTheEarliestCandidateOfWantedIdsOnly) {
  // Close ids (the dense array) and spread ones (the hash table).
  for (const std::vector<int64_t>& wanted :
       {std::vector<int64_t>{5, 6, 9}, std::vector<int64_t>{5, 1'000'000'007, -77'000'000'000}}) {
    IdIndex index = IndexOf(wanted);
    index.Offer(wanted[0], 30);
    index.Offer(wanted[0], 10);
    index.Offer(wanted[0], 20);
    index.Offer(wanted[1], 4);
    index.Offer(12345, 1);  // not wanted
    EXPECT_EQ(index.Find(wanted[0]), 10);
    EXPECT_EQ(index.Find(wanted[1]), 4);
    EXPECT_EQ(index.Find(wanted[2]), -1);  // wanted, never offered
    EXPECT_EQ(index.Find(12345), -1);
    EXPECT_EQ(index.Find(7), -1);
  }
  IdIndex empty = IndexOf({});
  empty.Offer(1, 1);
  EXPECT_EQ(empty.Find(1), -1);
}

TEST(IdIndex, IdsAtBothEndsOfTheIntegerRange) {
  IdIndex index = IndexOf({INT64_MIN, INT64_MAX, 0});
  index.Offer(INT64_MIN, 1);
  index.Offer(INT64_MAX, 2);
  index.Offer(0, 3);
  EXPECT_EQ(index.Find(INT64_MIN), 1);
  EXPECT_EQ(index.Find(INT64_MAX), 2);
  EXPECT_EQ(index.Find(0), 3);
  EXPECT_EQ(index.Find(INT64_MIN + 1), -1);
}

// Parts of a parallel loop offer at once; the earliest candidate wins whatever the order.
TEST(IdIndex, ParallelOffersKeepTheEarliest) {
  std::vector<int64_t> wanted;
  for (int64_t id = 0; id < 2000; ++id) wanted.push_back(id * 3);
  IdIndex index = IndexOf(wanted);
  std::vector<std::pair<int64_t, uint32_t>> offers;
  for (uint32_t c = 0; c < 20000; ++c) offers.emplace_back(wanted[c % wanted.size()], c + 1);
  std::shuffle(offers.begin(), offers.end(), std::mt19937(7));
  const size_t parts = 8;
  RunInParts(parts, [&](size_t part) {
    for (size_t k = PartBegin(offers.size(), part, parts),
                end = PartEnd(offers.size(), part, parts);
         k < end; ++k)
      index.Offer(offers[k].first, offers[k].second);
  });
  for (size_t k = 0; k < wanted.size(); ++k) EXPECT_EQ(index.Find(wanted[k]), int32_t(k + 1));
}

}  // namespace
}  // namespace profsh
