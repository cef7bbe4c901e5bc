// A JSON scanner over a window of input bytes, for readers that never build a DOM.
//
// The window is either the whole input (a mapped file) or a fixed-size chunk of it (gzip is
// inflated chunk by chunk). A scanner that runs past the bytes at hand returns Step::kNeedMore and
// leaves the caller to roll back to the start of its unit, Refill() and try again. Strings are
// checked (escapes, UTF-8) and decoded only when asked; numbers are checked against the JSON
// grammar and left as text for the caller to convert.
//
// Beyond the grammar, the scanner reads what Perfetto's and catapult's readers accept (trailing
// commas, raw control characters in strings), noting each repair in UnitRepairs
// (engine/trace/import_repairs.h names the kinds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/input_source.h"
#include "engine/trace/import_repairs.h"
#include "engine/util/json_scan.h"

namespace profsh {

enum class Step { kOk, kNeedMore, kError };

#define PROFSH_TRY(expr)                  \
  do {                                    \
    Step step_ = (expr);                  \
    if (step_ != Step::kOk) return step_; \
  } while (0)

// A string value: either raw bytes in the input (no escapes) or decoded bytes in the tokenizer's
// scratch buffer (see JsonTokenizer::View).
struct Text {
  const char* raw = nullptr;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool decoded = false;
};

// Whether [begin, end) is exactly one JSON number (the text of "ts": "5.1" between the quotes).
bool IsJsonNumber(const char* begin, const char* end, bool* is_integer);

// The repairs and dropped events of the unit being read. They are counted only once the unit is
// complete, as a unit may be read again after a refill.
class UnitRepairs {
 public:
  struct Pending {
    Repair kind;
    ImportRepairs::Place place;
    uint64_t where;
  };
  // kRefuse: a speculative reading (a template match) fails on a repair instead, so that the
  // event goes the full path, which counts it. kQuiet: a second reading of one event accepts
  // repairs without counting them twice.
  enum class Mode : uint8_t { kRecord, kRefuse, kQuiet };

  // Whether the repair is accepted.
  bool Note(Repair kind, ImportRepairs::Place place, uint64_t where) {
    if (mode_ == Mode::kRefuse) return false;
    if (mode_ == Mode::kRecord) repairs_.push_back({kind, place, where});
    return true;
  }
  void NoteDrop(uint64_t event) { drops_.push_back(event); }
  void ForgetRepairs() { repairs_.clear(); }
  void Clear() {
    repairs_.clear();
    drops_.clear();
  }
  bool empty() const { return repairs_.empty() && drops_.empty(); }
  bool has_repairs() const { return !repairs_.empty(); }
  std::span<const Pending> repairs() const { return repairs_; }
  std::span<const uint64_t> drops() const { return drops_; }
  Mode mode() const { return mode_; }
  void set_mode(Mode mode) { mode_ = mode; }

 private:
  std::vector<Pending> repairs_;
  std::vector<uint64_t> drops_;
  Mode mode_ = Mode::kRecord;
};

class JsonTokenizer {
 public:
  static constexpr size_t kChunkSize = 2 << 20;
  static constexpr int kMaxDepth = 512;

  explicit JsonTokenizer(InputSource& input) : input_(input) {}

  // Opens the window on the input: all of it when the input is one mapped block, else its first
  // chunk. Returns false on a read error (error() says it).
  bool Open();
  // Whether the window is the whole input.
  bool whole_input() const { return release_mark_ != nullptr; }
  // Moves the window so that it starts at keep_from and holds as much more input as fits (it
  // grows when the unit being read fills half of it). Returns false at the end of the input or
  // on a read error (then error() is set).
  bool Refill(const char* keep_from);
  // On a whole-input window, gives the pages before the cursor back to the system every few
  // megabytes (they are read from the file again if an error message needs them).
  void ReleaseParsed() {
    if (release_mark_ != nullptr && p_ - release_mark_ >= kReleaseStride) {
      input_.ReleaseBefore(static_cast<size_t>(p_ - buf_));
      release_mark_ = p_;
    }
  }

  // The cursor. peek() is valid after a scanner returned kOk with input left (SkipWs does).
  const char* pos() const { return p_; }
  void set_pos(const char* p) { p_ = p; }
  const char* end() const { return end_; }
  char peek() const { return *p_; }
  void Advance() { ++p_; }
  bool eof() const { return eof_; }
  // The input's byte offset of a place in the window.
  uint64_t OffsetOf(const char* at) const {
    return base_offset_ + static_cast<uint64_t>(at - buf_);
  }

  // Skips whitespace; kNeedMore when the window ends first.
  Step SkipWs() {
    if (p_<end_&& static_cast<unsigned char>(*p_)> ' ') return Step::kOk;
    return SkipWsSlow();
  }
  // Consumes the character c; what names what was expected, for the error.
  Step Expect(char c, const char* what) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return Step::kOk;
    }
    return ExpectSlow(c, what);
  }
  // A string at the cursor. With decode, escapes are decoded into the scratch buffer.
  Step ScanString(Text* out, bool decode) {
#if defined(__SSE2__)
    // A string whose closing quote is within 16 bytes and that needs no escapes or validation.
    if (end_ - p_ >= 17 && *p_ == '"') {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_ + 1));
      __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                     _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
      int mask = _mm_movemask_epi8(special);
      if (mask != 0) {
        int i = __builtin_ctz(static_cast<unsigned>(mask));
        if (p_[1 + i] == '"') {
          out->raw = p_ + 1;
          out->size = static_cast<uint32_t>(i);
          out->decoded = false;
          p_ += i + 2;
          return Step::kOk;
        }
      }
    }
#endif
    return ScanStringSlow(out, decode);
  }
  // An object member's name, its ':' and the whitespace after it: the cursor ends at the value.
  // colon_error names the member's kind ("':' after an argument name").
  Step ScanMemberName(Text* name, bool decode, const char* colon_error) {
    PROFSH_TRY(ScanString(name, decode));
    PROFSH_TRY(SkipWs());
    PROFSH_TRY(Expect(':', colon_error));
    return SkipWs();
  }
  // What follows a member or an element: a ',' or the closing bracket (consumed), or neither.
  enum class Separator { kComma, kClose, kOther };
  Separator TakeSeparator(char close) {
    if (p_ < end_ && (*p_ == ',' || *p_ == close))
      return *p_++ == ',' ? Separator::kComma : Separator::kClose;
    return Separator::kOther;
  }
  // A number at the cursor: *begin is its first byte, the cursor ends after it.
  Step ScanNumber(const char** begin, bool* is_integer);
  // A number of microseconds in the common "digits[.digits]" shape, converted to nanoseconds in
  // one pass; false (cursor unmoved) for any other shape, which the general path reads.
  bool FastMicros(int64_t* out);
  // A non-negative integer of up to nine digits at `at`; false for anything else. The cursor
  // ends after it.
  bool FastSmallInt(const char* at, uint32_t* out);
  Step ScanLiteral(std::string_view word);
  // Checks and skips one value of any kind.
  Step SkipValue(int depth);

  // The text of a scanned string.
  std::string_view View(const Text& t) const {
    return t.decoded ? std::string_view(decode_buf_.data() + t.offset, t.size)
                     : std::string_view(t.raw, t.size);
  }
  // Empties the scratch buffer that decoded strings live in.
  void ClearDecoded() {
    decode_buf_.clear();
  }

  // Sets the error to "FILE:LINE:COLUMN (byte N): message" and returns kError.
  Step Fail(const char* at, std::string message);
  const std::string& error() const {
    return error_;
  }
  void set_error(std::string message) {
    error_ = std::move(message);
  }
  std::string Position(const char* at) const;

  UnitRepairs& repairs() {
    return repairs_;
  }
  // Notes a repair at a byte of the window.
  bool NoteRepairAt(Repair kind, const char* at) {
    return repairs_.Note(kind, ImportRepairs::Place::kByte, OffsetOf(at));
  }

 private:
  static constexpr ptrdiff_t kReleaseStride = ptrdiff_t{8} << 20;

  Step SkipWsSlow();
  Step ExpectSlow(char c, const char* what);
  Step ScanStringSlow(Text* out, bool decode);
  // The members and elements after an object's or array's opening bracket.
  Step SkipMembers(int depth, char close);

  InputSource& input_;
  std::string error_;
  UnitRepairs repairs_;
  std::string decode_buf_;

  const char* buf_ = nullptr;
  // Whole-input windows: where the parsed pages were last given back (nullptr: a streamed input).
  const char* release_mark_ = nullptr;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  bool eof_ = false;
  std::unique_ptr<char[]> storage_;
  size_t capacity_ = 0;
  uint64_t base_offset_ = 0;    // input offset of buf_[0]
  uint64_t lines_before_ = 0;   // newlines before buf_[0]
  uint64_t column_before_ = 0;  // bytes of buf_[0]'s line before it
};

// Inline: they run for every time and most argument numbers, from other files.
inline bool JsonTokenizer::FastMicros(int64_t* out) {
  const char* q = p_;
  if (end_ - q < 32 || !json::IsDigit(*q) || (*q == '0' && json::IsDigit(q[1]))) return false;
  int n = json::LeadingDigits8(q);
  int64_t whole;
  if (n < 8) {
    whole = 0;
    for (int i = 0; i < n; ++i) whole = whole * 10 + (q[i] - '0');
    q += n;
  } else {
    int more = json::LeadingDigits8(q + 8);
    if (more == 8) return false;  // 16 digits or more: the general path
    whole = json::EightDigitsValue(q);
    for (int i = 0; i < more; ++i) whole = whole * 10 + (q[8 + i] - '0');
    q += 8 + more;
  }
  int64_t frac = 0;
  if (*q == '.') {
    ++q;
    int f = json::LeadingDigits8(q);
    if (f == 0 || f == 8) return false;
    static constexpr int64_t kScale[4] = {1000, 100, 10, 1};
    int used = f < 3 ? f : 3;
    for (int i = 0; i < used; ++i) frac = frac * 10 + (q[i] - '0');
    frac *= kScale[used];
    if (f > 3 && q[3] >= '5') ++frac;  // round below a nanosecond
    q += f;
  }
  if (*q == 'e' || *q == 'E') return false;
  *out = whole * 1000 + frac;
  p_ = q;
  return true;
}

inline bool JsonTokenizer::FastSmallInt(const char* at, uint32_t* out) {
  if (end_ - at < 10) return false;
  uint32_t v = 0;
  int n = 0;
  while (n < 9 && json::IsDigit(at[n])) v = v * 10 + static_cast<uint32_t>(at[n++] - '0');
  const char next = at[n];
  if (n == 0 || (at[0] == '0' && n > 1) || json::IsDigit(next) || next == '.' || next == 'e' ||
      next == 'E') {
    return false;
  }
  *out = v;
  p_ = at + n;
  return true;
}

}  // namespace profsh
