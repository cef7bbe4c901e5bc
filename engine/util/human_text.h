// Counts and numbers as messages to people show them: "1 process", "3 windows", "712600.186".
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

}  // namespace profsh
