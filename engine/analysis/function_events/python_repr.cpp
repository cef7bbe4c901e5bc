// Python's str() of an input value, the text torch's tables print: what json.loads made of the
// argument, printed by Python (floats in repr's shortest form, strings in its quotes and escapes).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/analysis/function_events/input_values.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

// Python's repr() of a float: the shortest digits that read back the same, written positionally
// for decimal exponents -4..15 and as d.ddde+XX otherwise.
void AppendFloat(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("nan");
    return;
  }
  if (std::isinf(v)) {
    out->append(v < 0 ? "-inf" : "inf");
    return;
  }
  if (std::signbit(v)) out->push_back('-');
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));  // "1.5e+00"
  const size_t e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_at)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_at + 1 + (sci[e_at + 1] == '+'), sci.data() + sci.size(),
                  exponent);
  if (exponent < -4 || exponent >= 16) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1);
    }
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out->append(e);
    return;
  }
  if (exponent < 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-exponent - 1), '0');
    out->append(digits);
    return;
  }
  const size_t whole = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= whole) {
    out->append(digits);
    out->append(whole - digits.size(), '0');
    out->append(".0");
    return;
  }
  out->append(digits, 0, whole);
  out->push_back('.');
  out->append(digits, whole);
}

// Code points Python's str.isprintable() rejects besides the C0 and C1 controls: separators
// other than the space, and the common format characters.
bool IsUnprintable(char32_t cp) {
  return (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x1680 || cp == 0x180E ||
         (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
         (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF ||
         (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0xE000 && cp <= 0xF8FF);
}

// Python's repr() of a str: single quotes unless the text has a single quote and no double
// one; backslash escapes for the quote, the backslash, \t \n \r and unprintable characters.
void AppendString(std::string_view s, std::string* out) {
  const bool double_quotes =
      s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char quote = double_quotes ? '"' : '\'';
  out->push_back(quote);
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = bytes[i];
    if (c < 0x80) {
      if (c == static_cast<unsigned char>(quote) || c == '\\') {
        out->push_back('\\');
        out->push_back(static_cast<char>(c));
      } else if (c == '\t') {
        out->append("\\t");
      } else if (c == '\n') {
        out->append("\\n");
      } else if (c == '\r') {
        out->append("\\r");
      } else if (c < 0x20 || c == 0x7F) {
        char e[8];
        std::snprintf(e, sizeof e, "\\x%02x", c);
        out->append(e);
      } else {
        out->push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(bytes + i, s.size() - i);
    if (n == 0) {  // not UTF-8 (the importer never lets such bytes through): kept as they are
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    char32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (bytes[i + k] & 0x3F);
    if (IsUnprintable(cp)) {
      char e[16];
      if (cp <= 0xFF)
        std::snprintf(e, sizeof e, "\\x%02x", static_cast<unsigned>(cp));
      else
        std::snprintf(e, sizeof e, "\\u%04x", static_cast<unsigned>(cp));
      out->append(e);
    } else {
      out->append(s.substr(i, n));
    }
    i += n;
  }
  out->push_back(quote);
}

void AppendRepr(const InputValue& v, std::string* out) {
  switch (v.type) {
    case InputValue::Type::kNone:
      out->append("None");
      return;
    case InputValue::Type::kBool:
      out->append(v.integer ? "True" : "False");
      return;
    case InputValue::Type::kInt:
      out->append(std::to_string(v.integer));
      return;
    case InputValue::Type::kUInt:
      out->append(std::to_string(static_cast<uint64_t>(v.integer)));
      return;
    case InputValue::Type::kFloat:
      AppendFloat(v.real, out);
      return;
    case InputValue::Type::kString:
      AppendString(v.text, out);
      return;
    case InputValue::Type::kText:
      out->append(v.text);
      return;
    case InputValue::Type::kList:
    case InputValue::Type::kDict: {
      const bool dict = v.type == InputValue::Type::kDict;
      out->push_back(dict ? '{' : '[');
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out->append(dict && i % 2 == 1 ? ": " : ", ");
        AppendRepr(v.items[i], out);
      }
      out->push_back(dict ? '}' : ']');
      return;
    }
  }
}

}  // namespace

std::string PythonRepr(const InputValue& value) {
  std::string out;
  AppendRepr(value, &out);
  return out;
}

}  // namespace profsh
