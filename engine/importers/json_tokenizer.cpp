#include "engine/importers/json_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "engine/util/utf8.h"

namespace profsh {

using json::IsDigit;
using json::IsSpace;

namespace {

// Digits from q on, eight at a time.
const char* SkipDigits(const char* q, const char* end) {
  while (end - q >= 8) {
    int n = json::LeadingDigits8(q);
    q += n;
    if (n < 8) return q;
  }
  while (q < end && IsDigit(*q)) ++q;
  return q;
}

}  // namespace

bool IsJsonNumber(const char* begin, const char* end, bool* is_integer) {
  const char* q = begin;
  if (q < end && *q == '-') ++q;
  if (q >= end || !IsDigit(*q)) return false;
  if (*q == '0') {
    ++q;
  } else {
    while (q < end && IsDigit(*q)) ++q;
  }
  *is_integer = true;
  if (q < end && *q == '.') {
    ++q;
    if (q >= end || !IsDigit(*q)) return false;
    while (q < end && IsDigit(*q)) ++q;
    *is_integer = false;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    if (q >= end || !IsDigit(*q)) return false;
    while (q < end && IsDigit(*q)) ++q;
    *is_integer = false;
  }
  return q == end;
}

bool JsonTokenizer::Open() {
  std::string_view whole = input_.WholeContent();
  if (!whole.empty()) {
    buf_ = p_ = whole.data();
    end_ = whole.data() + whole.size();
    eof_ = true;
    release_mark_ = buf_;
    return true;
  }
  capacity_ = kChunkSize;
  // Not zeroed: only what Refill reads is looked at, and zeroing 2 MiB cost more than parsing a
  // small compressed trace.
  storage_ = std::make_unique_for_overwrite<char[]>(capacity_);
  buf_ = p_ = end_ = storage_.get();
  return Refill(p_) || error_.empty();
}

bool JsonTokenizer::Refill(const char* keep_from) {
  if (eof_) return false;
  size_t keep = static_cast<size_t>(end_ - keep_from);
  const uint64_t newlines = static_cast<uint64_t>(std::count(buf_, keep_from, '\n'));
  lines_before_ += newlines;
  // Columns count from the start of the line, which may lie before the new window.
  if (newlines > 0) {
    const void* last = memrchr(buf_, '\n', static_cast<size_t>(keep_from - buf_));
    column_before_ = static_cast<uint64_t>(keep_from - static_cast<const char*>(last) - 1);
  } else {
    column_before_ += static_cast<uint64_t>(keep_from - buf_);
  }
  base_offset_ += static_cast<uint64_t>(keep_from - buf_);
  if (keep * 2 > capacity_) {
    // A single unit larger than half the window: grow so that it fits with room to spare.
    size_t bigger = std::max(capacity_ * 2, kChunkSize);
    auto next = std::make_unique_for_overwrite<char[]>(bigger);
    std::memcpy(next.get(), keep_from, keep);
    storage_ = std::move(next);
    capacity_ = bigger;
  } else {
    std::memmove(storage_.get(), keep_from, keep);
  }
  size_t filled = keep;
  while (filled < capacity_) {
    auto got = input_.Read(storage_.get() + filled, capacity_ - filled);
    if (!got.ok()) {
      error_ = got.error().message;
      return false;
    }
    if (got.value() == 0) {
      eof_ = true;
      break;
    }
    filled += got.value();
  }
  buf_ = storage_.get();
  p_ = buf_;
  end_ = buf_ + filled;
  return true;
}

std::string JsonTokenizer::Position(const char* at) const {
  uint64_t line = lines_before_ + 1;
  const char* line_start = buf_;
  for (const char* q = buf_; q < at; ++q) {
    if (*q == '\n') {
      ++line;
      line_start = q + 1;
    }
  }
  uint64_t column = static_cast<uint64_t>(at - line_start) + 1;
  if (line_start == buf_) column += column_before_;
  return input_.path() + ":" + std::to_string(line) + ":" + std::to_string(column) + " (byte " +
         std::to_string(OffsetOf(at)) + ")";
}

Step JsonTokenizer::Fail(const char* at, std::string message) {
  if (at > end_) at = end_;
  error_ = Position(at) + ": " + message;
  return Step::kError;
}

Step JsonTokenizer::SkipWsSlow() {
  while (p_ < end_ && IsSpace(*p_)) ++p_;
  return p_ < end_ ? Step::kOk : Step::kNeedMore;
}

Step JsonTokenizer::ExpectSlow(char c, const char* what) {
  if (p_ >= end_) return Step::kNeedMore;
  if (*p_ != c) return Fail(p_, std::string("expected ") + what);
  ++p_;
  return Step::kOk;
}

Step JsonTokenizer::ScanStringSlow(Text* out, bool decode) {
  if (p_ >= end_) return Step::kNeedMore;
  if (*p_ != '"') return Fail(p_, "expected a string");
  const char* start = ++p_;
  bool escaped = false;
  while (true) {
    p_ = json::FindStringSpecial(p_, end_);
    if (p_ >= end_) return Step::kNeedMore;
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') break;
    if (c == '\\') {
      if (end_ - p_ < 2) return Step::kNeedMore;
      char e = p_[1];
      if (e == 'u') {
        if (end_ - p_ < 6) return Step::kNeedMore;
        for (int i = 2; i < 6; ++i) {
          if (!std::isxdigit(static_cast<unsigned char>(p_[i])))
            return Fail(p_, "invalid \\u escape in string");
        }
        p_ += 6;
      } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                 e == 'r' || e == 't') {
        p_ += 2;
      } else {
        return Fail(p_, std::string("invalid escape '\\") + e + "' in string");
      }
      escaped = true;
      continue;
    }
    if (c < 0x20) [[unlikely]] {
      // JSON wants it escaped; PyTorch itself writes raw ones (pytorch#130622), and Perfetto
      // and browsers read them.
      if (!NoteRepairAt(Repair::kControlCharacter, p_)) return Step::kError;
      ++p_;
      continue;
    }
    size_t available = static_cast<size_t>(end_ - p_);
    size_t len = Utf8SequenceLength(reinterpret_cast<const unsigned char*>(p_), available);
    if (len == 0) {
      size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
      // At the end of the input too: a file cut inside a character is a file cut short.
      if (available < need) return Step::kNeedMore;
      return Fail(p_, "invalid UTF-8 in string");
    }
    p_ += len;
  }
  out->raw = start;
  out->size = static_cast<uint32_t>(p_ - start);
  out->decoded = false;
  ++p_;  // closing quote
  if (escaped && decode) {
    out->offset = static_cast<uint32_t>(decode_buf_.size());
    json::DecodeString(start, start + out->size, &decode_buf_);
    out->size = static_cast<uint32_t>(decode_buf_.size() - out->offset);
    out->decoded = true;
  }
  return Step::kOk;
}

Step JsonTokenizer::ScanNumber(const char** begin, bool* is_integer) {
  const char* start = p_;
  const char* q = p_;
  if (q < end_ && *q == '-') ++q;
  if (q >= end_) return Step::kNeedMore;
  if (*q == '0') {
    ++q;
  } else if (IsDigit(*q)) {
    q = SkipDigits(q, end_);
  } else {
    return Fail(q, "invalid number");
  }
  bool integer = true;
  if (q < end_ && *q == '.') {
    ++q;
    if (q >= end_) return Step::kNeedMore;
    if (!IsDigit(*q)) return Fail(q, "invalid number: digits must follow '.'");
    q = SkipDigits(q, end_);
    integer = false;
  }
  if (q < end_ && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end_ && (*q == '+' || *q == '-')) ++q;
    if (q >= end_) return Step::kNeedMore;
    if (!IsDigit(*q)) return Fail(q, "invalid number: digits must follow the exponent");
    while (q < end_ && IsDigit(*q)) ++q;
    integer = false;
  }
  if (q >= end_ && !eof_) return Step::kNeedMore;  // more digits may follow in the next chunk
  if (q < end_ && (IsDigit(*q) || *q == '.')) return Fail(q, "invalid number");
  p_ = q;
  *begin = start;
  *is_integer = integer;
  return Step::kOk;
}

Step JsonTokenizer::ScanLiteral(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size()) {
    if (std::memcmp(p_, word.data(), static_cast<size_t>(end_ - p_)) == 0) return Step::kNeedMore;
    return Fail(p_, "invalid literal (expected " + std::string(word) + ")");
  }
  if (std::memcmp(p_, word.data(), word.size()) != 0) {
    return Fail(p_, "invalid literal (expected " + std::string(word) + ")");
  }
  p_ += word.size();
  return Step::kOk;
}

Step JsonTokenizer::SkipValue(int depth) {
  if (depth > kMaxDepth) return Fail(p_, "JSON nested too deeply");
  PROFSH_TRY(SkipWs());
  char c = *p_;
  if (c == '"') {
    Text ignored;
    return ScanString(&ignored, false);
  }
  if (c == '{' || c == '[') {
    ++p_;
    return SkipMembers(depth, c == '{' ? '}' : ']');
  }
  if (c == 't') return ScanLiteral("true");
  if (c == 'f') return ScanLiteral("false");
  if (c == 'n') return ScanLiteral("null");
  if (c == '-' || IsDigit(c)) {
    const char* begin;
    bool is_integer;
    return ScanNumber(&begin, &is_integer);
  }
  return Fail(p_, std::string("unexpected character '") + c + "'");
}

Step JsonTokenizer::SkipMembers(int depth, char close) {
  const bool object = close == '}';
  PROFSH_TRY(SkipWs());
  if (*p_ == close) {
    ++p_;
    return Step::kOk;
  }
  while (true) {
    if (object) {
      PROFSH_TRY(SkipWs());
      Text ignored;
      PROFSH_TRY(ScanMemberName(&ignored, false, "':' after a member name"));
    }
    PROFSH_TRY(SkipValue(depth + 1));
    PROFSH_TRY(SkipWs());
    if (*p_ == ',') {
      ++p_;
      PROFSH_TRY(SkipWs());
      if (*p_ == close) [[unlikely]] {
        if (!NoteRepairAt(Repair::kTrailingComma, p_)) return Step::kError;
        ++p_;
        return Step::kOk;
      }
      continue;
    }
    if (*p_ == close) {
      ++p_;
      return Step::kOk;
    }
    return Fail(p_,
                object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
  }
}

}  // namespace profsh
