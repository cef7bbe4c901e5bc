#include "engine/util/json_scan.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "engine/util/utf8.h"

namespace profsh::json {

Number ConvertNumber(const char* begin, const char* end, bool is_integer) {
  Number n;
  if (is_integer) {
    const char* digits = begin + (*begin == '-');
    if (end - digits <= 18) {
      int64_t v = 0;
      for (const char* q = digits; q < end; ++q) v = v * 10 + (*q - '0');
      n.kind = NumberKind::kInt;
      n.i = *begin == '-' ? -v : v;
      return n;
    }
    int64_t v;
    auto r = std::from_chars(begin, end, v);
    if (r.ec == std::errc() && r.ptr == end) {
      n.kind = NumberKind::kInt;
      n.i = v;
      return n;
    }
    uint64_t u;
    r = std::from_chars(begin, end, u);
    if (r.ec == std::errc() && r.ptr == end) {
      n.kind = NumberKind::kUInt;
      n.i = static_cast<int64_t>(u);
      return n;
    }
  }
  n.kind = NumberKind::kDouble;
  std::from_chars(begin, end, n.d);  // valid JSON: only out-of-range can fail, leaving ±inf/0
  return n;
}

bool MicrosToNanos(const char* begin, const char* end, bool is_integer, int64_t* out) {
  constexpr int64_t kMaxMicros = std::numeric_limits<int64_t>::max() / 1000 - 1;
  const char* p = begin;
  bool negative = *p == '-';
  if (negative) ++p;
  int64_t whole = 0;
  int digits = 0;
  while (p < end && IsDigit(*p)) {
    if (++digits > 16) break;
    whole = whole * 10 + (*p - '0');
    ++p;
  }
  bool simple = digits <= 16 && whole <= kMaxMicros;
  int64_t frac = 0;
  if (simple && !is_integer) {
    if (p < end && *p == '.') {
      ++p;
      int scale = 0;
      while (p < end && IsDigit(*p) && scale < 3) {
        frac = frac * 10 + (*p - '0');
        ++p;
        ++scale;
      }
      for (; scale < 3; ++scale) frac *= 10;
      if (p < end && IsDigit(*p) && *p >= '5') ++frac;  // round half up below a nanosecond
      while (p < end && IsDigit(*p)) ++p;
    }
    if (p != end) simple = false;  // an exponent: take the slow path
  }
  if (simple) {
    int64_t ns = whole * 1000 + frac;
    *out = negative ? -ns : ns;
    return true;
  }
  double us = 0;
  std::from_chars(begin, end, us);
  double ns = us * 1000.0;
  if (!(std::fabs(ns) < 9.2e18)) return false;
  *out = static_cast<int64_t>(std::llround(ns));
  return true;
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
char32_t Hex4(const char* p) {
  return static_cast<char32_t>((HexValue(p[0]) << 12) | (HexValue(p[1]) << 8) |
                               (HexValue(p[2]) << 4) | HexValue(p[3]));
}
}  // namespace

void DecodeString(const char* begin, const char* end, std::string* out) {
  const char* p = begin;
  while (p < end) {
    const char* run = p;
    while (p < end && *p != '\\') ++p;
    out->append(run, static_cast<size_t>(p - run));
    if (p >= end) break;
    char e = p[1];
    p += 2;
    switch (e) {
      case '"':
        out->push_back('"');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '/':
        out->push_back('/');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        char32_t cp = Hex4(p);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
          char32_t low = Hex4(p + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            p += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate is not a character
        AppendUtf8(*out, cp);
        break;
      }
      default:
        break;  // the tokenizer has already rejected other escapes
    }
  }
}

void AppendMinified(std::string_view json, std::string* out) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (static_cast<unsigned char>(c) < 0x20) {
        // A raw control character the reader let through: escaped, so the text is JSON.
        static constexpr char kHex[] = "0123456789abcdef";
        out->append("\\u00");
        out->push_back(kHex[(c >> 4) & 0xf]);
        out->push_back(kHex[c & 0xf]);
        continue;
      }
      out->push_back(c);
      if (c == '\\') {
        out->push_back(json[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (!IsSpace(c)) {
      // A trailing comma the reader let through is left out.
      if ((c == ']' || c == '}') && !out->empty() && out->back() == ',') out->pop_back();
      out->push_back(c);
      if (c == '"') in_string = true;
    }
  }
}

}  // namespace profsh::json
