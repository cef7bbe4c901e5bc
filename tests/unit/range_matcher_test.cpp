// What opens and closes in a stream: push/pop levels per thread and domain, start/end ranges by
// id across threads (an end may come first), and ITT frames.
#include "engine/decoding/range_matcher.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace profsh {
namespace {

namespace st = stream;

st::StreamEvent At(uint64_t ticks, uint64_t range_id = 0) {
  st::StreamEvent e;
  e.ticks = ticks;
  e.range_id = range_id;
  return e;
}

TEST(RangeMatcher, LevelsNestPerThreadAndDomain) {
  RangeMatcher m;
  m.Push(7, 0, At(10), 0);
  m.Push(7, 0, At(20), 0);
  m.Push(7, 1, At(15), 0);  // another domain of the same thread: its own stack
  m.Push(8, 0, At(12), 1);
  ASSERT_NE(m.Top(7, 0), nullptr);
  EXPECT_EQ(m.Top(7, 0)->begin.ticks, 20u);
  EXPECT_EQ(m.Pop(7, 0)->begin.ticks, 20u);
  EXPECT_EQ(m.Pop(7, 0)->begin.ticks, 10u);
  EXPECT_FALSE(m.Pop(7, 0));  // an unmatched pop
  EXPECT_EQ(m.Top(7, 0), nullptr);
  EXPECT_EQ(m.Pop(7, 1)->begin.ticks, 15u);
  const std::optional<OpenLevel> other = m.Pop(8, 0);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->window, 1);
}

TEST(RangeMatcher, AThreadsOpenLevelsAreTakenOutermostFirst) {
  RangeMatcher m;
  m.Push(7, 0, At(10), 0);
  m.Push(7, 0, At(20), 0);
  m.Push(9, 0, At(30), 0);
  std::vector<int64_t> open = m.ThreadsWithOpenLevels();
  std::sort(open.begin(), open.end());
  EXPECT_EQ(open, (std::vector<int64_t>{7, 9}));
  size_t visited = 0;
  m.ForEachOpen([&](int64_t, OpenLevel&) { ++visited; });
  EXPECT_EQ(visited, 3u);
  const std::vector<OpenLevel> taken = m.TakeThread(7);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].begin.ticks, 10u);
  EXPECT_EQ(taken[1].begin.ticks, 20u);
  EXPECT_EQ(m.ThreadsWithOpenLevels(), (std::vector<int64_t>{9}));
}

TEST(RangeMatcher, StartEndRangesMatchAcrossThreadsInEitherOrder) {
  RangeMatcher m;
  m.Start(At(100, 1), 0);
  m.End(1, 250);
  m.End(2, 400);  // its start is in a block read later
  m.Start(At(300, 2), 0);
  EXPECT_EQ(m.CloseWindow(0, 1'000), 0u);
  std::vector<MatchedRange> ranges = m.TakeMatched(0);
  ASSERT_EQ(ranges.size(), 2u);
  std::sort(ranges.begin(), ranges.end(), [](const MatchedRange& a, const MatchedRange& b) {
    return a.begin_ticks < b.begin_ticks;
  });
  EXPECT_EQ(ranges[0].end_ticks, 250u);
  EXPECT_EQ(ranges[1].begin_ticks, 300u);
  EXPECT_EQ(ranges[1].end_ticks, 400u);
  EXPECT_FALSE(ranges[1].cut);
  EXPECT_TRUE(m.TakeMatched(0).empty());  // taken out
}

TEST(RangeMatcher, RangesOpenAtTheirWindowsEndAreCut) {
  RangeMatcher m;
  m.Start(At(100, 1), 0);
  m.Start(At(150, 2), 1);
  EXPECT_EQ(m.CloseWindow(0, 500), 1u);
  const std::vector<MatchedRange> cut = m.TakeMatched(0);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_TRUE(cut[0].cut);
  EXPECT_EQ(cut[0].end_ticks, 500u);
  EXPECT_TRUE(m.TakeMatched(1).empty());  // window 1 is still open
  // An end before the start (clocks of two threads) never makes a negative range.
  m.End(2, 120);
  const std::vector<MatchedRange> second = m.TakeMatched(1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].end_ticks, 150u);
}

TEST(RangeMatcher, RangesOutsideEveryWindowAreNotKept) {
  RangeMatcher m;
  m.Start(At(100, 1), -1);
  m.End(1, 200);
  EXPECT_EQ(m.TakeUnknownEnds(), 1u);  // its end finds no start
  EXPECT_EQ(m.TakeUnknownEnds(), 0u);  // and is forgotten
}

TEST(RangeMatcher, FramesCloseTheInnermostOfTheirId) {
  RangeMatcher m;
  m.FrameBegin(3, 1, 100);
  m.FrameBegin(3, 1, 200);
  m.FrameBegin(4, 1, 150);
  EXPECT_EQ(m.FrameEnd(3, 1), 200u);
  EXPECT_EQ(m.FrameEnd(3, 1), 100u);
  EXPECT_FALSE(m.FrameEnd(3, 1));
  EXPECT_EQ(m.FrameEnd(4, 1), 150u);
}

}  // namespace
}  // namespace profsh
