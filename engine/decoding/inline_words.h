// An event's inline argument values as TraceBuilder::AddEvent takes them: each value an
// AddInlineArg declared is two 32-bit words, the low one first. Shared by the emitters.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace profsh {

inline void PushInlineInt(std::vector<uint32_t>& words, int64_t v) {
  words.push_back(static_cast<uint32_t>(v));
  words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
}

inline void PushInlineDouble(std::vector<uint32_t>& words, double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  PushInlineInt(words, bits);
}

}  // namespace profsh
