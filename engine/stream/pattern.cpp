#include "engine/stream/pattern.h"

#include <ctype.h>

namespace profsh::stream {

namespace {

struct Matcher {
  const char* text_end;
  const char* pattern_end;
  int depth = 0;  // recursion guard: patterns are short, but text is the workload's
  bool malformed = false;

  bool ClassMatches(unsigned char c, char cls) const {
    bool r;
    switch (tolower(static_cast<unsigned char>(cls))) {
      case 'a':
        r = isalpha(c);
        break;
      case 'c':
        r = iscntrl(c);
        break;
      case 'd':
        r = isdigit(c);
        break;
      case 'g':
        r = isgraph(c);
        break;
      case 'l':
        r = islower(c);
        break;
      case 'p':
        r = ispunct(c);
        break;
      case 's':
        r = isspace(c);
        break;
      case 'u':
        r = isupper(c);
        break;
      case 'w':
        r = isalnum(c);
        break;
      case 'x':
        r = isxdigit(c);
        break;
      default:
        return cls == static_cast<char>(c);  // an escaped literal
    }
    return isupper(static_cast<unsigned char>(cls)) ? !r : r;
  }

  // The end of the single-character class starting at p ("x", "%d", "[...]").
  const char* ClassEnd(const char* p) {
    if (p >= pattern_end) return malformed = true, p;
    if (*p == '%') {
      if (p + 1 >= pattern_end) return malformed = true, p + 1;
      return p + 2;
    }
    if (*p == '[') {
      const char* q = p + 1;
      if (q < pattern_end && *q == '^') ++q;
      do {  // the first ']' after '[' (or '[^') is literal
        if (q >= pattern_end) return malformed = true, q;
        if (*q == '%') ++q;
        ++q;
      } while (q < pattern_end && *q != ']');
      if (q >= pattern_end) return malformed = true, q;
      return q + 1;
    }
    return p + 1;
  }

  bool SetMatches(unsigned char c, const char* p,
                  const char* end) const {  // p at '[', end after ']'
    bool negate = false;
    ++p;
    if (*p == '^') {
      negate = true;
      ++p;
    }
    const char* last = end - 1;  // the closing ']'
    for (; p < last; ++p) {
      if (*p == '%' && p + 1 < last) {
        ++p;
        if (ClassMatches(c, *p)) return !negate;
      } else if (p + 2 < last && p[1] == '-') {
        if (static_cast<unsigned char>(p[0]) <= c && c <= static_cast<unsigned char>(p[2]))
          return !negate;
        p += 2;
      } else if (static_cast<unsigned char>(*p) == c) {
        return !negate;
      }
    }
    return negate;
  }

  bool SingleMatches(const char* s, const char* p, const char* ep) const {
    if (s >= text_end) return false;
    unsigned char c = static_cast<unsigned char>(*s);
    switch (*p) {
      case '.':
        return true;
      case '%':
        return ClassMatches(c, p[1]);
      case '[':
        return SetMatches(c, p, ep);
      default:
        return static_cast<unsigned char>(*p) == c;
    }
  }

  // The end of the match of pattern p at text s, or nullptr.
  const char* Match(const char* s, const char* p) {
    if (++depth > 200) {
      --depth;
      return nullptr;
    }
    const char* result = nullptr;
    while (true) {
      if (p >= pattern_end) {
        result = s;
        break;
      }
      if (*p == '$' && p + 1 == pattern_end) {
        result = s == text_end ? s : nullptr;
        break;
      }
      const char* ep = ClassEnd(p);
      if (malformed) break;
      const char q = ep < pattern_end ? *ep : '\0';
      if (q == '?') {
        if (SingleMatches(s, p, ep) && (result = Match(s + 1, ep + 1)) != nullptr) break;
        p = ep + 1;
        continue;
      }
      if (q == '+' || q == '*') {
        const char* i = s;
        while (SingleMatches(i, p, ep)) ++i;  // greedy, then back off
        const char* floor = q == '+' ? s + 1 : s;
        for (; i >= floor; --i) {
          if ((result = Match(i, ep + 1)) != nullptr) break;
          if (i == s) break;
        }
        if (q == '+' && !SingleMatches(s, p, ep)) result = nullptr;
        break;
      }
      if (q == '-') {
        const char* i = s;
        while (true) {  // lazy
          if ((result = Match(i, ep + 1)) != nullptr) break;
          if (!SingleMatches(i, p, ep)) break;
          ++i;
        }
        break;
      }
      if (!SingleMatches(s, p, ep)) break;
      ++s;
      p = ep;
    }
    --depth;
    return result;
  }
};

size_t Length(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

}  // namespace

bool PatternFind(const char* pattern, const char* text, size_t length) {
  Matcher m;
  m.text_end = text + length;
  const size_t plen = Length(pattern);
  const bool anchored = plen > 0 && pattern[0] == '^';
  const char* p = anchored ? pattern + 1 : pattern;
  m.pattern_end = pattern + plen;
  const char* s = text;
  do {
    if (m.Match(s, p) != nullptr) return true;
    if (m.malformed) return false;
  } while (s++ < m.text_end && !anchored);
  return false;
}

bool PatternValid(const char* pattern) {
  Matcher m;
  const size_t plen = Length(pattern);
  m.pattern_end = pattern + plen;
  const char* p = plen > 0 && pattern[0] == '^' ? pattern + 1 : pattern;
  while (p < m.pattern_end && !m.malformed) {
    if (*p == '$' && p + 1 == m.pattern_end) break;
    p = m.ClassEnd(p);
    if (p < m.pattern_end && (*p == '?' || *p == '*' || *p == '+' || *p == '-')) ++p;
  }
  return !m.malformed;
}

}  // namespace profsh::stream
