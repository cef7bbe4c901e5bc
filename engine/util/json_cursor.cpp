#include "engine/util/json_cursor.h"

#include <charconv>

#include "engine/util/json_scan.h"

namespace profsh::json {

namespace {

bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::optional<size_t> FindStringEnd(std::string_view s, size_t open) {
  for (size_t p = open + 1; p < s.size();) {
    if (s[p] == '"') return p;
    if (s[p] != '\\') {
      ++p;
      continue;
    }
    if (p + 1 >= s.size()) return std::nullopt;
    const char e = s[p + 1];
    if (e == 'u') {
      if (p + 6 > s.size() || !IsHex(s[p + 2]) || !IsHex(s[p + 3]) || !IsHex(s[p + 4]) ||
          !IsHex(s[p + 5]))
        return std::nullopt;
      p += 6;
    } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
      p += 2;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

char Cursor::Peek() {
  while (p_ < s_.size() && IsSpace(s_[p_])) ++p_;
  return p_ < s_.size() ? s_[p_] : '\0';
}

bool Cursor::Consume(char c) {
  if (Peek() != c) return false;
  ++p_;
  return true;
}

std::optional<std::string> Cursor::String() {
  if (Peek() != '"') return std::nullopt;
  const std::optional<size_t> close = FindStringEnd(s_, p_);
  if (!close) {
    p_ = s_.size();
    return std::nullopt;
  }
  std::string out;
  DecodeString(s_.data() + p_ + 1, s_.data() + *close, &out);
  p_ = *close + 1;
  return out;
}

std::optional<int64_t> Cursor::Int() {
  Peek();
  int64_t v = 0;
  const char* at = s_.data() + p_;
  const char* end = s_.data() + s_.size();
  auto [stop, ec] = std::from_chars(at, end, v);
  if (ec != std::errc() || (stop < end && (*stop == '.' || *stop == 'e' || *stop == 'E'))) {
    Skip();
    return std::nullopt;
  }
  p_ += static_cast<size_t>(stop - at);
  return v;
}

bool Cursor::Skip() {
  const char c = Peek();
  if (c == '"') return String().has_value();
  if (c == '[' || c == '{') {
    const char close = c == '[' ? ']' : '}';
    ++p_;
    if (Consume(close)) return true;
    do {
      if (close == '}' && (!String() || !Consume(':'))) return false;
      if (!Skip()) return false;
    } while (Consume(','));
    return Consume(close);
  }
  // A number, true, false or null: up to the next delimiter.
  const size_t start = p_;
  while (p_ < s_.size() && s_[p_] != ',' && s_[p_] != ']' && s_[p_] != '}' && s_[p_] != ':' &&
         !IsSpace(s_[p_]))
    ++p_;
  return p_ > start;
}

}  // namespace profsh::json
