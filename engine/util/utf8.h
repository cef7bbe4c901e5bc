// UTF-8 helpers. Column widths in PyTorch's tables are Python string lengths, i.e. code points,
// so everything that pads or truncates text counts code points, not bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace profsh {

// Number of code points; continuation bytes are not counted.
size_t Utf8Length(std::string_view s);
// The first `n` code points (Python's s[:n]).
std::string_view Utf8Prefix(std::string_view s, size_t n);
// Everything after the first `n` code points (Python's s[n:]).
std::string_view Utf8DropPrefix(std::string_view s, size_t n);
// Returns the byte offset of the first invalid sequence, or npos when `s` is valid UTF-8.
size_t Utf8FirstInvalid(std::string_view s);
// Length of the valid sequence starting at s[0] (1..4), or 0 when it is invalid or cut short.
size_t Utf8SequenceLength(const unsigned char* s, size_t available);
void AppendUtf8(std::string& out, char32_t code_point);

// Text from another program is bytes; the trace holds UTF-8: invalid bytes become U+FFFD.
std::string ValidUtf8(std::string_view s);

}  // namespace profsh
