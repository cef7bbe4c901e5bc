#include "engine/decoding/stream_clock.h"

namespace profsh {

void TickClock::Observe(const stream::ClockBlock& c, uint32_t clock_kind) {
  if (fixed_) return;
  if (!observed_) {
    ticks0_ = c.ticks;
    mono0_ = c.monotonic_ns;
    real0_ = c.realtime_ns;
    slope_ = 1;
    observed_ = true;
  }
  if (clock_kind == stream::kClockMonotonic) {
    slope_ = 1;
    ticks0_ = static_cast<uint64_t>(mono0_);
  } else if (c.ticks > ticks0_ && c.monotonic_ns > mono0_) {
    slope_ = (static_cast<double>(c.monotonic_ns) - static_cast<double>(mono0_)) /
             static_cast<double>(c.ticks - ticks0_);
  }
}

namespace {

// ns per tick between two pairs (in doubles: a corrupt stream's clocks may be far apart).
double Rate(const stream::ClockBlock& a, const stream::ClockBlock& b) {
  return (static_cast<double>(b.monotonic_ns) - static_cast<double>(a.monotonic_ns)) /
         static_cast<double>(b.ticks - a.ticks);
}

}  // namespace

ClockFit FitClock(const std::vector<stream::ClockBlock>& pairs, uint32_t clock_kind) {
  ClockFit fit;
  if (pairs.empty()) return fit;
  const stream::ClockBlock& a = pairs.front();
  const stream::ClockBlock& b = pairs.back();
  fit.ticks0 = a.ticks;
  fit.real0 = a.realtime_ns;
  fit.span = b.ticks - a.ticks;
  if (clock_kind == stream::kClockMonotonic) {
    fit.ticks0 = static_cast<uint64_t>(a.monotonic_ns);
    fit.fitted = true;
  } else if (b.ticks > a.ticks + 1000000 && b.monotonic_ns > a.monotonic_ns) {
    fit.slope = Rate(a, b);
    fit.fitted = true;
  } else if (b.ticks > a.ticks && b.monotonic_ns > a.monotonic_ns) {
    // Too short to measure the rate well; used only when no other stream measured it.
    fit.slope = Rate(a, b);
  } else {
    fit.slope = 0;  // no rate at all
  }
  return fit;
}

}  // namespace profsh
