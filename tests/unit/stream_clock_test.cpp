// The stream's clock: ticks to absolute ns, as a stream is read (TickClock) and over a whole
// stream (FitClock), for both clock kinds and for clocks no real machine has.
#include "engine/decoding/stream_clock.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace profsh {
namespace {

namespace st = stream;

st::ClockBlock Pair(uint64_t ticks, int64_t mono, int64_t real) {
  return st::ClockBlock{ticks, mono, real};
}

// A TSC at 2.5 ticks per ns: the rate comes from the monotonic clock, the offset from realtime.
TEST(StreamClock, TicksFollowTheMonotonicRateFromTheRealtimeOffset) {
  TickClock clock;
  clock.Observe(Pair(1000, 50, 1'000'000'000), st::kClockTsc);
  clock.Observe(Pair(1000 + 2'500'000, 50 + 1'000'000, 1'000'000'000 + 1'000'000), st::kClockTsc);
  EXPECT_EQ(clock.ToNs(1000), 1'000'000'000);
  EXPECT_EQ(clock.ToNs(1000 + 250), 1'000'000'100);
  EXPECT_EQ(clock.ToNs(1000 + 2'500'000), 1'001'000'000);
  // Before the first pair: the same line, backwards.
  EXPECT_EQ(clock.ToNs(750), 1'000'000'000 - 100);
}

// NTP may step realtime: only the first pair's realtime sets the offset, later ones only the rate
// through the monotonic clock.
TEST(StreamClock, ARealtimeStepDoesNotMoveTheLine) {
  TickClock clock;
  clock.Observe(Pair(0, 0, 5'000), st::kClockTsc);
  clock.Observe(Pair(2'000, 1'000, 999'999'999), st::kClockTsc);
  EXPECT_EQ(clock.ToNs(2'000), 6'000);
}

// A collector without a TSC writes CLOCK_MONOTONIC ns as its ticks.
TEST(StreamClock, MonotonicTicksAreNanoseconds) {
  TickClock clock;
  clock.Observe(Pair(700, 700, 10'700), st::kClockMonotonic);
  EXPECT_EQ(clock.ToNs(700), 10'700);
  EXPECT_EQ(clock.ToNs(1'700), 11'700);
}

// A corrupt or crafted stream: any ticks give a time whose differences still fit in 64 bits.
TEST(StreamClock, AbsurdClocksSaturate) {
  TickClock clock;
  clock.Set(0, INT64_MAX, 1e12);
  EXPECT_EQ(clock.ToNs(UINT64_MAX / 2), TickClock::kLimitNs);
  clock.Set(UINT64_MAX / 2, INT64_MIN, 1e12);
  EXPECT_EQ(clock.ToNs(0), -TickClock::kLimitNs);
  clock.Set(0, 0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(clock.ToNs(12345), 0);
}

// A conversion set from outside is not changed by the pairs read later.
TEST(StreamClock, ASetConversionIsKept) {
  TickClock clock;
  clock.Set(100, 1'000, 0.5);
  clock.Observe(Pair(0, 0, 0), st::kClockTsc);
  clock.Observe(Pair(10'000'000, 1, 1), st::kClockTsc);
  EXPECT_EQ(clock.ToNs(300), 1'100);
}

TEST(StreamClock, FitMeasuresTheRateOverTheWholeStream) {
  const std::vector<st::ClockBlock> pairs = {Pair(1'000, 0, 100), Pair(2'000'000, 800'000, 900),
                                             Pair(4'001'000, 1'600'000, 1'600'100)};
  const ClockFit fit = FitClock(pairs, st::kClockTsc);
  EXPECT_TRUE(fit.fitted);
  EXPECT_EQ(fit.ticks0, 1'000u);
  EXPECT_EQ(fit.real0, 100);
  EXPECT_DOUBLE_EQ(fit.slope, 0.4);
  EXPECT_EQ(fit.span, 4'000'000u);
}

TEST(StreamClock, AShortStreamGivesARateToBorrowFromAnother) {
  // Under a million ticks apart: a rate, but not a measured one.
  ClockFit fit = FitClock({Pair(0, 0, 0), Pair(1'000, 400, 400)}, st::kClockTsc);
  EXPECT_FALSE(fit.fitted);
  EXPECT_DOUBLE_EQ(fit.slope, 0.4);
  // One pair, or clocks that do not move: no rate at all.
  fit = FitClock({Pair(5, 5, 5)}, st::kClockTsc);
  EXPECT_FALSE(fit.fitted);
  EXPECT_EQ(fit.slope, 0);
  EXPECT_FALSE(FitClock({}, st::kClockTsc).fitted);
  // Monotonic ticks need no rate.
  fit = FitClock({Pair(70, 70, 1'070)}, st::kClockMonotonic);
  EXPECT_TRUE(fit.fitted);
  EXPECT_EQ(fit.ticks0, 70u);
}

}  // namespace
}  // namespace profsh
