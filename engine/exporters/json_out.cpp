#include "engine/exporters/json_out.h"

#include <cmath>

namespace profsh {

void JsonOut::Double(double v) {
  if (!std::isfinite(v)) {
    Raw("null");  // JSON has no NaN or infinity
    return;
  }
  Reserve(40);
  char* start = buf_ + used_;
  auto r = std::to_chars(start, buf_ + kSize, v);
  used_ = static_cast<size_t>(r.ptr - buf_);
  for (char* q = start; q < r.ptr; ++q) {
    if (*q == '.' || *q == 'e') return;
  }
  buf_[used_++] = '.';
  buf_[used_++] = '0';
}

void JsonOut::String(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  Char('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    Raw(s.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '"':
        Raw("\\\"");
        break;
      case '\\':
        Raw("\\\\");
        break;
      case '\n':
        Raw("\\n");
        break;
      case '\r':
        Raw("\\r");
        break;
      case '\t':
        Raw("\\t");
        break;
      case '\b':
        Raw("\\b");
        break;
      case '\f':
        Raw("\\f");
        break;
      default: {
        char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        Raw(std::string_view(esc, 6));
      }
    }
  }
  Raw(s.substr(run));
  Char('"');
}

}  // namespace profsh
