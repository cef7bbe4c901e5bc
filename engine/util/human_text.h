// Counts and numbers as messages to people show them: "1 process", "3 windows", "712600.186",
// "24,587,247".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace profsh {

inline std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// At most three decimals, without trailing zeros: 712600.18599999987 -> "712600.186", 12.0 -> "12".
inline std::string HumanNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// `v` with `decimals` decimals and its whole part's digits grouped by three:
// 24587247 -> "24,587,247", (2235204.27, 1) -> "2,235,204.3".
inline std::string GroupedNumber(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);  // -0.0
  const size_t digits_begin = s[0] == '-' ? 1 : 0;
  size_t digits_end = s.find('.');
  if (digits_end == std::string::npos) digits_end = s.size();
  for (size_t at = digits_end; at > digits_begin + 3; at -= 3) s.insert(at - 3, 1, ',');
  return s;
}

}  // namespace profsh
