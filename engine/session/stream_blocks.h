// Reading the blocks of a collector stream (engine/stream/stream_format.h): a bounds-checked
// cursor over a block's payload, and the text helpers both the session reader and the stream
// decoder use.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/util/utf8.h"

namespace profsh {

struct Block {
  uint32_t type;
  std::string_view payload;
  size_t offset;  // of the block header in the file
};

struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  explicit Cursor(std::string_view s)
      : p(reinterpret_cast<const uint8_t*>(s.data())),
        end(reinterpret_cast<const uint8_t*>(s.data()) + s.size()) {}
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  template <typename T>
  T Fixed() {
    T v{};
    if (end - p < static_cast<ptrdiff_t>(sizeof(T))) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string_view Str() {
    uint64_t n = Varint();
    if (!ok || static_cast<uint64_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

// Text from the workload is bytes; the trace holds UTF-8 (invalid bytes become U+FFFD).
inline std::string ValidUtf8(std::string_view s) {
  if (Utf8FirstInvalid(s) == std::string_view::npos) return std::string(s);
  std::string out;
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(u + i, s.size() - i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace profsh
