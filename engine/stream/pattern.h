// Lua patterns (the subset step markers need) for the injected runtime, which has no Lua:
// ^ and $ anchors, . and %a %c %d %g %l %p %s %u %w %x (and their upper-case complements),
// %-escapes, [sets] with ranges, classes and ^, and the * + - ? quantifiers. No captures, %b or
// %f: a step marker pattern such as "^ProfilerStep#%d+" or "^iteration_%d+$" needs none.
#pragma once

#include <cstddef>

namespace profsh::stream {

// Whether `pattern` matches somewhere in `text` (anywhere, or at the start when anchored),
// as string.find(text, pattern) would. A malformed pattern matches nothing.
bool PatternFind(const char* pattern, const char* text, size_t length);

// Whether `pattern` is well formed (checked when the runtime starts).
bool PatternValid(const char* pattern);

}  // namespace profsh::stream
