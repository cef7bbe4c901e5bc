// The windows of one stream, from its step, capture and stop boundaries, by torch.profiler's
// window rule; and which window an event at a given time belongs to.
#include "engine/decoding/window_tracker.h"

#include <gtest/gtest.h>

namespace profsh {
namespace {

using A = ProfilerAction;

struct Tracker {
  TickClock clock;
  WindowTracker windows{clock};
  Tracker() {
    clock.Set(0, 1'000'000, 1.0);  // a tick is a ns, tick 0 at 1 ms
    windows.SetProcess(42, 1'000'000);
  }
};

// wait=1, warmup=1, active=2, repeat=2: the actions torch's schedule gives steps 0..7.
TEST(WindowTracker, AScheduleCutsOneWindowPerActiveCycle) {
  Tracker t;
  const A actions[] = {A::kNone, A::kWarmup, A::kRecord, A::kRecordAndSave,
                       A::kNone, A::kWarmup, A::kRecord, A::kRecordAndSave};
  std::vector<size_t> opened;
  for (int64_t step = 0; step < 8; ++step) {
    if (auto w = t.windows.OnStep(100 * (step + 1), step, actions[step])) opened.push_back(*w);
  }
  t.windows.OnStop(2'000);
  ASSERT_EQ(opened, (std::vector<size_t>{0, 1}));
  const Window& first = t.windows[0];
  EXPECT_EQ(first.begin_ticks, 300u);
  EXPECT_EQ(first.end_ticks, 500u);  // at the boundary after RECORD_AND_SAVE
  EXPECT_TRUE(first.info.has_steps);
  EXPECT_EQ(first.info.first_step, 2);
  EXPECT_EQ(first.info.last_step, 3);
  EXPECT_EQ(first.info.reason, "schedule");
  EXPECT_EQ(first.info.pid, 42);
  EXPECT_EQ(first.info.begin_ns, 1'000'300);
  EXPECT_EQ(first.info.end_ns, 1'000'500);
  EXPECT_EQ(t.windows[1].info.first_step, 6);
  // Its RECORD_AND_SAVE step had no boundary after it: the stop ends it.
  EXPECT_EQ(t.windows[1].end_ticks, 2'000u);
}

// RECORD_AND_SAVE followed at once by another recording step: one window ends, the next begins
// at the same boundary.
TEST(WindowTracker, BackToBackCyclesShareTheirBoundary) {
  Tracker t;
  t.windows.OnStep(100, 0, A::kRecordAndSave);
  auto second = t.windows.OnStep(200, 1, A::kRecordAndSave);
  ASSERT_TRUE(second);
  EXPECT_EQ(t.windows[0].end_ticks, 200u);
  EXPECT_EQ(t.windows[*second].begin_ticks, 200u);
}

TEST(WindowTracker, EventsBelongToTheWindowOpenAtTheirTime) {
  Tracker t;
  t.windows.OnCapture(100, true);
  t.windows.OnCapture(200, false);
  t.windows.OnCapture(300, true);  // still open
  uint64_t late = 0;
  EXPECT_EQ(t.windows.At(50, &late), WindowTracker::kNone);
  EXPECT_EQ(t.windows.At(100, &late), 0);
  EXPECT_EQ(t.windows.At(199, &late), 0);
  EXPECT_EQ(t.windows.At(200, &late), WindowTracker::kNone);  // ends are exclusive
  EXPECT_EQ(t.windows.At(1'000'000, &late), 1);
  EXPECT_EQ(t.windows[0].info.reason, "capture range");
  // A second begin while one is open opens nothing.
  EXPECT_FALSE(t.windows.OnCapture(400, true));
  // A window handed over takes nothing more: its late events are counted.
  t.windows[0].sealed = true;
  EXPECT_EQ(t.windows.At(150, &late), WindowTracker::kNone);
  EXPECT_EQ(late, 1u);
}

TEST(WindowTracker, OnDemandWindowsNameTheirRequest) {
  Tracker t;
  t.windows.OnDemand(7);
  auto w = t.windows.OnStep(100, 3, A::kRecordAndSave);
  ASSERT_TRUE(w);
  EXPECT_EQ(t.windows[*w].info.reason, "on demand");
  EXPECT_EQ(t.windows[*w].info.request, 7u);
}

TEST(WindowTracker, TheWholeRunStartsWithTheProcess) {
  Tracker t;
  const size_t w = t.windows.OpenWholeRun();
  EXPECT_EQ(t.windows[w].info.begin_ns, 1'000'000);
  EXPECT_EQ(t.windows[w].info.reason, "whole run");
  // An end before the window's begin (a clock read racing the first event) is its begin.
  Tracker u;
  u.windows.OnCapture(500, true);
  u.windows.EndOpenWindow(400);
  EXPECT_EQ(u.windows[0].end_ticks, 500u);
}

// A long job's windows are let go of once handed over, keeping their numbering.
TEST(WindowTracker, ForgottenWindowsKeepTheirIndexes) {
  Tracker t;
  for (int64_t step = 0; step < 5; ++step)
    t.windows.OnStep(100 * (step + 1), step, A::kRecordAndSave);
  t.windows.OnStop(1'000);
  for (size_t i = t.windows.begin(); i < t.windows.end(); ++i) t.windows[i].sealed = true;
  t.windows[4].sealed = false;
  t.windows.ForgetSealed(1);
  EXPECT_EQ(t.windows.begin(), 4u);
  EXPECT_EQ(t.windows.end(), 5u);
  EXPECT_EQ(t.windows[4].info.index, 4u);
  uint64_t late = 0;
  EXPECT_EQ(t.windows.At(550, &late), 4);
  EXPECT_EQ(t.windows.At(150, &late), WindowTracker::kNone);  // forgotten: nothing, not late
  EXPECT_EQ(late, 0u);
}

}  // namespace
}  // namespace profsh
