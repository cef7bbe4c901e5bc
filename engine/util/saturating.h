// Conversions that cannot overflow: hostile or corrupt traces carry numbers far outside what a
// real one holds (a duration of 2^62 ns, an id of 5e55), and converting those is undefined
// behaviour in C++.
#pragma once

#include <cstdint>

namespace profsh {

// A double as int64: truncated, saturating outside int64's range, NaN giving 0.
inline int64_t SaturatingInt64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;  // 2^63
  if (v < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// a + b, saturating at int64's limits (totals of hostile durations).
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

}  // namespace profsh
