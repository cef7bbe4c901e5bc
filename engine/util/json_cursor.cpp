#include "engine/util/json_cursor.h"

#include <charconv>

#include "engine/util/json_scan.h"

namespace profsh::json {

namespace {

bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

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
  if (!Consume('"')) return std::nullopt;
  const size_t begin = p_;
  // Find the closing quote, checking every escape first: DecodeString trusts its input.
  while (p_ < s_.size() && s_[p_] != '"') {
    if (s_[p_] != '\\') {
      ++p_;
      continue;
    }
    if (p_ + 1 >= s_.size()) {
      p_ = s_.size();
      return std::nullopt;
    }
    const char e = s_[p_ + 1];
    if (e == 'u') {
      if (p_ + 6 > s_.size() || !IsHex(s_[p_ + 2]) || !IsHex(s_[p_ + 3]) || !IsHex(s_[p_ + 4]) ||
          !IsHex(s_[p_ + 5])) {
        p_ = s_.size();
        return std::nullopt;
      }
      p_ += 6;
    } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
      p_ += 2;
    } else {
      p_ = s_.size();
      return std::nullopt;
    }
  }
  if (p_ >= s_.size()) {
    p_ = s_.size();
    return std::nullopt;
  }
  std::string out;
  DecodeString(s_.data() + begin, s_.data() + p_, &out);
  ++p_;
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
