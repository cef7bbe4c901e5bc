// The runtime's clock (TSC ticks or CLOCK_MONOTONIC ns) converted to absolute time, as Kineto
// converts its TSC timestamps after the fact: kClock blocks pair ticks with the monotonic and
// realtime clocks; the rate comes from the monotonic clock (realtime may be stepped by NTP), the
// offset from realtime.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/stream/stream_codec.h"

namespace profsh {

class TickClock {
 public:
  // A conversion decided from outside (whole-file loading fits it over the stream's span).
  void Set(uint64_t ticks0, int64_t real0, double ns_per_tick) {
    fixed_ = true;
    ticks0_ = ticks0;
    real0_ = real0;
    slope_ = ns_per_tick;
  }
  // A stream read as it grows: the rate from the first pair to the latest.
  void Observe(const stream::ClockBlock& c, uint32_t clock_kind);
  // Saturates at ±kLimitNs: a corrupt or crafted stream can name ticks, offsets and rates far
  // from any real clock, and the differences of two times (durations, offsets from an origin)
  // must still fit in 64 bits.
  int64_t ToNs(uint64_t ticks) const {
    const double d = static_cast<double>(static_cast<int64_t>(ticks - ticks0_)) * slope_;
    const double limit = static_cast<double>(kLimitNs);
    const int64_t delta = !(d == d)     ? 0
                          : d >= limit  ? kLimitNs
                          : d <= -limit ? -kLimitNs
                                        : std::llround(d);
    int64_t out;
    if (__builtin_add_overflow(ClampNs(real0_), delta, &out))
      return delta > 0 ? kLimitNs : -kLimitNs;
    return ClampNs(out);
  }
  static constexpr int64_t kLimitNs = int64_t{1} << 61;
  static int64_t ClampNs(int64_t ns) { return std::clamp(ns, -kLimitNs, kLimitNs); }

 private:
  bool fixed_ = false;
  bool observed_ = false;
  uint64_t ticks0_ = 0;
  int64_t real0_ = 0, mono0_ = 0;
  double slope_ = 1;
};

// The pairs of one whole stream, and what they give.
struct ClockFit {
  uint64_t ticks0 = 0;
  int64_t real0 = 0;
  double slope = 1;
  bool fitted = false;  // the rate was measured (else it must be borrowed)
  uint64_t span = 0;    // ticks between the first and the last pair
};
ClockFit FitClock(const std::vector<stream::ClockBlock>& pairs, uint32_t clock_kind);

}  // namespace profsh
