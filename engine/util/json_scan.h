// Byte-level helpers shared by the JSON trace tokenizer: whitespace, the string scanner, JSON
// number grammar, and microsecond-to-nanosecond conversion that keeps Kineto's nanosecond
// fractions exact (doubles cannot hold 1.7e15 µs with a .001 fraction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace profsh::json {

inline bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
inline bool IsDigit(char c) {
  return static_cast<unsigned char>(c - '0') < 10;
}

// First byte in [p, end) that ends a plain run inside a JSON string: '"', '\\', a control
// character (< 0x20) or a non-ASCII byte (>= 0x80, which must be validated as UTF-8).
inline const char* FindStringSpecial(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compare: catches 0x00-0x1f and, as negative numbers, 0x80-0xff.
    __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmplt_epi8(v, space));
    int mask = _mm_movemask_epi8(special);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
    ++p;
  }
  return end;
}

// How many of the 8 bytes at p are ASCII digits before the first non-digit (8 if all are).
// Needs 8 readable bytes. Works on the bytes as one word, with no carries between bytes.
inline int LeadingDigits8(const char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  uint64_t high_nibble_not_3 = (x & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL;
  uint64_t low_nibble_above_9 =
      ((x & 0x0F0F0F0F0F0F0F0FULL) + 0x0606060606060606ULL) & 0x1010101010101010ULL;
  uint64_t non_digit = high_nibble_not_3 | low_nibble_above_9;
  return non_digit == 0 ? 8 : __builtin_ctzll(non_digit) / 8;
}

// The value of 8 ASCII digits at p (all must be digits).
inline uint32_t EightDigitsValue(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  v -= 0x3030303030303030ULL;
  v = v * 10 + (v >> 8);  // pairs: each 16-bit lane now holds a two-digit number in its low byte
  uint64_t pairs_low = v & 0x000000FF000000FFULL;
  uint64_t pairs_high = (v >> 16) & 0x000000FF000000FFULL;
  return static_cast<uint32_t>(
      (pairs_low * ((1000000ULL << 32) + 100) + pairs_high * ((10000ULL << 32) + 1)) >> 32);
}

enum class NumberKind { kInt, kUInt, kDouble };

struct Number {
  NumberKind kind = NumberKind::kInt;
  int64_t i = 0;
  double d = 0;
};

// Converts the text of a valid JSON number.
Number ConvertNumber(const char* begin, const char* end, bool is_integer);

// Converts a valid JSON number of microseconds to integer nanoseconds, rounding below 1 ns.
// Returns false when it does not fit in int64 nanoseconds.
bool MicrosToNanos(const char* begin, const char* end, bool is_integer, int64_t* out);

// Appends the decoded text of a JSON string body (between the quotes, already validated).
void DecodeString(const char* begin, const char* end, std::string* out);

// Appends `json` (valid JSON text, or with the repairs the trace reader accepts: trailing
// commas, raw control characters in strings) as valid JSON without insignificant whitespace.
void AppendMinified(std::string_view json, std::string* out);

}  // namespace profsh::json
