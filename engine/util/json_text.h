// JSON text for small documents built in memory (metadata members): string escaping.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace profsh {

// Appends `s` as a JSON string literal (quotes included). Bytes are passed through, so UTF-8
// stays UTF-8; control characters are escaped.
inline void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace profsh
