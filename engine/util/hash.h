// A fast non-cryptographic 64-bit hash for interning. Quality matters only as far as open
// addressing needs well-spread low bits; speed matters because every imported event hashes
// its name and argument signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace profsh {

namespace hash_detail {
inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t Mix(uint64_t a, uint64_t b) {
  __uint128_t product = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}
constexpr uint64_t kP0 = 0xa0761d6478bd642fULL;
constexpr uint64_t kP1 = 0xe7037ed1a0b428dbULL;
constexpr uint64_t kP2 = 0x8ebc6af09c88c6e3ULL;
}  // namespace hash_detail

inline uint64_t HashBytes(const char* data, size_t len, uint64_t seed = 0) {
  using namespace hash_detail;
  uint64_t state = seed ^ kP0 ^ (len * kP2);
  const char* p = data;
  size_t remaining = len;
  while (remaining >= 16) {
    state = Mix(Load64(p) ^ kP1, Load64(p + 8) ^ state);
    p += 16;
    remaining -= 16;
  }
  uint64_t a = 0, b = 0;
  if (remaining >= 8) {
    a = Load64(p);
    b = Load64(p + remaining - 8);
  } else if (remaining >= 4) {
    a = Load32(p);
    b = Load32(p + remaining - 4);
  } else if (remaining > 0) {
    a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) |
        (static_cast<uint64_t>(static_cast<uint8_t>(p[remaining >> 1])) << 8) |
        static_cast<uint8_t>(p[remaining - 1]);
  }
  return Mix(a ^ kP1 ^ state, b ^ kP2 ^ len);
}

inline uint64_t HashBytes(std::string_view s, uint64_t seed = 0) {
  return HashBytes(s.data(), s.size(), seed);
}

inline uint64_t HashInt(uint64_t v) {
  return hash_detail::Mix(v ^ hash_detail::kP0, hash_detail::kP1);
}

}  // namespace profsh
