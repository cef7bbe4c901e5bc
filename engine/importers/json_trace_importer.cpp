// Streaming reader for Chrome Trace Event JSON: Kineto's object format ({"traceEvents": [...]}),
// both timestamp conventions, and the bare-array format of PyTorch's legacy export.
//
// The tokenizer never builds a DOM. It walks the input one unit at a time (a top-level member, or
// one event with its separator); when a unit runs past the bytes at hand it rolls back to the
// unit's start, reads more, and tries again, so gzip input is inflated in fixed-size chunks.
// Every event is validated (syntax, UTF-8, field types) and turned straight into columns.
//
// What Perfetto's and catapult's readers accept beyond the format (numbers written as strings,
// trailing commas, a file cut short, raw control characters, events without "ph", "ts", "tid",
// ...) is read too, on paths that only run where the strict reading fails; each repair is counted
// by kind (engine/trace/import_repairs.h). A unit's repairs count only once the unit is complete,
// as a unit may be parsed again after a refill.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/importers/event_templates.h"
#include "engine/importers/importer.h"
#include "engine/trace/kineto_schema.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/hash.h"
#include "engine/util/json_scan.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

using json::IsDigit;
using json::IsSpace;

enum class Step { kOk, kNeedMore, kError };

#define PROFSH_TRY(expr)                  \
  do {                                    \
    Step step_ = (expr);                  \
    if (step_ != Step::kOk) return step_; \
  } while (0)

constexpr size_t kChunkSize = 2 << 20;
constexpr int kMaxDepth = 512;

// A string value: either raw bytes in the input (no escapes) or decoded bytes in a scratch buffer.
struct Text {
  const char* raw = nullptr;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool decoded = false;
};

struct RawField {
  Text key;
  bool top_level = false;
  bool inline_value = false;
  ArgType type = ArgType::kNull;
  bool bool_value = false;
  int64_t int_value = 0;
  double double_value = 0;
  Text text;  // kString (decoded) or kJson (raw span)

  void SetNumber(const json::Number& n) {
    if (n.kind == json::NumberKind::kDouble) {
      type = ArgType::kDouble;
      double_value = n.d;
    } else {
      type = n.kind == json::NumberKind::kInt ? ArgType::kInt : ArgType::kUInt;
      int_value = n.i;
    }
  }
  // The number as an inline argument value.
  ArgValue Number() const {
    ArgValue v;
    v.type = type;
    v.int_value = int_value;
    v.double_value = double_value;
    return v;
  }
};

// Per-event keys whose numeric values differ on almost every event; they are stored inline
// instead of in the interned schema (see args.h).
bool IsVolatileKey(std::string_view key, bool top_level) {
  using namespace kineto;
  if (top_level) return key == kFlowId || key == "tts" || key == "tdur";
  // By length first; keys of one length share a case (the compiler rejects a repeated one).
  static_assert(kCorrelation.size() == kExternalId.size());
  static_assert(kTotalAllocated.size() == kSequenceNumber.size());
  switch (key.size()) {
    case kAddr.size():
      return key == kAddr;
    case kBytes.size():
      return key == kBytes || key == "bytes";
    case kEvIdx.size():
      return key == kEvIdx;
    case kPythonId.size():
      return key == kPythonId;
    case kExternalId.size():
      return key == kExternalId || key == kCorrelation;
    case kTotalReserved.size():
      return key == kTotalReserved;
    case kSequenceNumber.size():
      return key == kSequenceNumber || key == kTotalAllocated;
    case kPythonParentId.size():
      return key == kPythonParentId;
    case kRecordFunctionId.size():
      return key == kRecordFunctionId;
    case kMemoryBandwidth.size():
      return key == kMemoryBandwidth;
    default:
      return false;
  }
}

// Whether [begin, end) is exactly one JSON number (the text of "ts": "5.1" between the quotes).
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

class JsonTraceParser {
 public:
  JsonTraceParser(InputSource& input, Trace& trace) : input_(input), builder_(trace) {}

  Status Run();

 private:
  enum class State {
    kStart,
    kObjectFirstMember,
    kObjectMember,
    kEventsFirst,
    kEventsNext,
    kAfterEvents,
    kTrailing,
    kDone,
  };

  Step ParseUnit();
  Step ParseObjectMember();
  Step ParseEventUnit(bool first);
  Step ParseAfterEvents();
  Step ParseTrailing();

  Step ParseEventObject(bool decode_fields);
  Step ParseArgsObject(bool decode_fields);
  Step ParseFieldValue(const Text& key, const char* key_at, bool top_level, bool decode_fields);
  bool IsInline(std::string_view key, bool top_level, bool is_number);
  Step ParseIdent(Ident* out, const char* field);
  // A "ts" or "dur": a number of microseconds, or (repaired) a string holding one. Anything else
  // leaves *valid false, and the event is dropped.
  Step ParseTime(int64_t* out, const char* field, bool* valid);
  Step ParseTimeNumber(int64_t* out, const char* field);
  // "tts"/"tdur" written as a string of a number: kept as the number, like a number there.
  Step ParseNumberInString(const Text& key, const char* key_at, bool decode_fields);
  Step CommitEvent();
  // Drops the event being committed, counting why.
  Step DropEvent(Repair why);

  // Repairs of the unit being parsed: counted once the unit is complete (FlushRepairs). In a
  // template match (in_template_) a repair is refused instead, so that the event goes the full
  // path, which counts it; while an event is parsed again (reparsing_) it is not counted twice.
  bool NoteRepair(Repair kind, const char* at);
  bool NoteEventRepair(Repair kind);
  void FlushRepairs();
  struct PendingRepair {
    Repair kind;
    ImportRepairs::Place place;
    uint64_t where;
  };
  std::vector<PendingRepair> unit_repairs_;
  std::vector<uint64_t> unit_drops_;
  bool in_template_ = false;
  bool reparsing_ = false;
  // Where the input ended early, if it did: every whole event before it is kept.
  bool AcceptCut(const char* unit_start);

  // The scanners have an inline fast path for the common shape and an out-of-line general one.
  Step SkipWs() {
    if (p_<end_&& static_cast<unsigned char>(*p_)> ' ') return Step::kOk;
    return SkipWsSlow();
  }
  Step SkipWsSlow();
  Step Expect(char c, const char* what) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return Step::kOk;
    }
    return ExpectSlow(c, what);
  }
  Step ExpectSlow(char c, const char* what);
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
  Step ScanStringSlow(Text* out, bool decode);
  Step ScanNumber(const char** begin, bool* is_integer);
  // ts/dur in the common "digits[.digits]" shape, scanned and converted in one pass.
  bool FastMicros(int64_t* out);
  Step ScanLiteral(std::string_view word);
  Step SkipValue(int depth);

  Step Fail(const char* at, std::string message);
  Step FailEvent(const char* at, std::string message);
  std::string_view View(const Text& t) const {
    return t.decoded ? std::string_view(decode_buf_.data() + t.offset, t.size)
                     : std::string_view(t.raw, t.size);
  }
  bool Refill(const char* keep_from);
  std::string Position(const char* at) const;

  InputSource& input_;
  TraceBuilder builder_;
  std::string error_;

  // Input window.
  const char* buf_ = nullptr;
  // Whole-file parses: where the parsed pages were last given back (nullptr: a streamed input).
  const char* release_mark_ = nullptr;
  static constexpr ptrdiff_t kReleaseStride = ptrdiff_t{8} << 20;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  bool eof_ = false;
  std::unique_ptr<char[]> storage_;
  size_t capacity_ = 0;
  uint64_t base_offset_ = 0;   // file offset of buf_[0]
  uint64_t lines_before_ = 0;  // newlines before buf_[0]

  State state_ = State::kStart;
  bool bare_array_ = false;
  bool saw_events_ = false;
  uint64_t event_index_ = 0;

  // Scratch for the event being parsed.
  std::string decode_buf_;
  std::vector<RawField> fields_;
  char ph_ = 0;
  bool has_ph_ = false, has_ts_ = false, has_dur_ = false, has_name_ = false, has_cat_ = false;
  bool has_pid_ = false, has_tid_ = false;
  bool bad_ts_ = false, bad_dur_ = false;  // a "ts"/"dur" that is no number
  bool saw_field_ = false;                 // the event object was not empty
  int64_t ts_ = 0, dur_ = 0;
  Text name_, cat_;
  Ident pid_, tid_;
  const char* event_start_ = nullptr;
  // The args' signature (raw bytes, volatile numbers cut out) and the decision state for them.
  ArgSignature signature_;
  std::vector<uint32_t> inline_words_;
  const char* piece_start_ = nullptr;
  char phase_hint_ = 0;          // phase learnt in a first pass, for a re-parse
  char decided_with_phase_ = 0;  // phase that inline decisions of this event were made with
  bool made_decisions_ = false;

  // Event templates (see event_templates.h) and what this event's parse recorded for them.
  bool TryEventTemplate();
  bool MatchShape(const EventShape& shape, const char* q);
  bool FastSmallInt(const char* at);
  Step ParseHole(const Hole& hole, const char* at);
  EventTemplates templates_;
  std::vector<RecordedHole> holes_;
  const char* event_end_ = nullptr;
  EventShape* matched_shape_ = nullptr;  // set when the event came from a template
};

std::string JsonTraceParser::Position(const char* at) const {
  uint64_t line = lines_before_ + 1;
  const char* line_start = buf_;
  for (const char* q = buf_; q < at; ++q) {
    if (*q == '\n') {
      ++line;
      line_start = q + 1;
    }
  }
  uint64_t column = static_cast<uint64_t>(at - line_start) + 1;
  uint64_t offset = base_offset_ + static_cast<uint64_t>(at - buf_);
  return input_.path() + ":" + std::to_string(line) + ":" + std::to_string(column) + " (byte " +
         std::to_string(offset) + ")";
}

Step JsonTraceParser::Fail(const char* at, std::string message) {
  if (at > end_) at = end_;
  error_ = Position(at) + ": " + message;
  return Step::kError;
}

Step JsonTraceParser::FailEvent(const char* at, std::string message) {
  return Fail(at, "traceEvents[" + std::to_string(event_index_) + "]: " + message);
}

bool JsonTraceParser::NoteRepair(Repair kind, const char* at) {
  if (in_template_) return false;
  if (!reparsing_) {
    unit_repairs_.push_back(
        {kind, ImportRepairs::Place::kByte, base_offset_ + static_cast<uint64_t>(at - buf_)});
  }
  return true;
}

bool JsonTraceParser::NoteEventRepair(Repair kind) {
  if (in_template_) return false;
  if (!reparsing_) unit_repairs_.push_back({kind, ImportRepairs::Place::kEvent, event_index_});
  return true;
}

void JsonTraceParser::FlushRepairs() {
  for (const PendingRepair& r : unit_repairs_) builder_.repairs().Note(r.kind, r.place, r.where);
  for (uint64_t event : unit_drops_) builder_.NoteDroppedEvent(event);
  unit_repairs_.clear();
  unit_drops_.clear();
}

// The input ended inside a unit. A trace cut short (a writer that was killed) keeps every whole
// event before the cut, as Perfetto does; with nothing of traceEvents read yet there is nothing
// to keep.
bool JsonTraceParser::AcceptCut(const char* unit_start) {
  unit_repairs_.clear();
  unit_drops_.clear();
  if (!saw_events_) return false;
  const char* q = unit_start;
  while (q < end_ && IsSpace(*q)) ++q;
  const bool events = state_ == State::kEventsFirst || state_ == State::kEventsNext;
  // The Chrome JSON Array Format allows the closing bracket to be missing.
  if (bare_array_ && events && q == end_) return true;
  builder_.repairs().Note(Repair::kTraceCut, ImportRepairs::Place::kByte,
                          base_offset_ + static_cast<uint64_t>(unit_start - buf_));
  return true;
}

bool JsonTraceParser::Refill(const char* keep_from) {
  if (eof_) return false;
  size_t keep = static_cast<size_t>(end_ - keep_from);
  lines_before_ += static_cast<uint64_t>(std::count(buf_, keep_from, '\n'));
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

Status JsonTraceParser::Run() {
  std::string_view whole = input_.WholeContent();
  if (!whole.empty()) {
    buf_ = p_ = whole.data();
    end_ = whole.data() + whole.size();
    eof_ = true;
    release_mark_ = buf_;
    builder_.ReserveForBytes(whole.size());
  } else {
    capacity_ = kChunkSize;
    // Not zeroed: only what Refill reads is looked at, and zeroing 2 MiB cost more than parsing a
    // small compressed trace.
    storage_ = std::make_unique_for_overwrite<char[]>(capacity_);
    buf_ = p_ = end_ = storage_.get();
    builder_.ReserveForBytes(input_.ContentSizeHint());
    if (!Refill(p_)) {
      if (!error_.empty()) return Error{error_};
    }
  }

  while (state_ != State::kDone) {
    const char* unit_start = p_;
    Step step = ParseUnit();
    if (step == Step::kOk) {
      if (!unit_repairs_.empty() || !unit_drops_.empty()) [[unlikely]]
        FlushRepairs();
      // A mapped file's pages that were parsed leave the resident set as the parse goes on
      // (they are read from the file again if an error message needs them).
      if (release_mark_ != nullptr && p_ - release_mark_ >= kReleaseStride) {
        input_.ReleaseBefore(static_cast<size_t>(p_ - buf_));
        release_mark_ = p_;
      }
      continue;
    }
    if (step == Step::kError) return Error{error_};
    p_ = unit_start;
    unit_repairs_.clear();
    unit_drops_.clear();
    if (!Refill(unit_start)) {
      if (!error_.empty()) return Error{error_};
      // Out of input in the middle of a unit.
      if (AcceptCut(p_)) break;
      Fail(end_, std::string("unexpected end of file") +
                     (state_ == State::kEventsFirst || state_ == State::kEventsNext
                          ? " inside traceEvents[" + std::to_string(event_index_) + "]"
                          : "") +
                     (input_.CutShort().empty() ? " (is the file truncated?)"
                                                : " (" + input_.CutShort() + ")"));
      return Error{error_};
    }
  }
  if (!saw_events_) {
    return Error{input_.path() + ": the JSON object has no \"traceEvents\" array"};
  }
  // A compressed file cut between two events (a bare array needs no closing bracket) is cut all
  // the same.
  if (!input_.CutShort().empty() && builder_.repairs().count(Repair::kTraceCut) == 0) {
    builder_.repairs().Note(Repair::kTraceCut, ImportRepairs::Place::kByte,
                            base_offset_ + static_cast<uint64_t>(end_ - buf_));
  }
  return builder_.Finish();
}

Step JsonTraceParser::ParseUnit() {
  switch (state_) {
    case State::kStart: {
      PROFSH_TRY(SkipWs());
      if (*p_ == '{') {
        ++p_;
        state_ = State::kObjectFirstMember;
        return Step::kOk;
      }
      if (*p_ == '[') {
        ++p_;
        bare_array_ = true;
        saw_events_ = true;
        builder_.SetFormat("chrome-json-array");
        state_ = State::kEventsFirst;
        return Step::kOk;
      }
      return Fail(p_, "expected '{' or '[' at the start of a JSON trace");
    }
    case State::kObjectFirstMember: {
      PROFSH_TRY(SkipWs());
      if (*p_ == '}') {
        ++p_;
        state_ = State::kTrailing;
        return Step::kOk;
      }
      return ParseObjectMember();
    }
    case State::kObjectMember:
      return ParseObjectMember();
    case State::kEventsFirst:
      return ParseEventUnit(true);
    case State::kEventsNext:
      return ParseEventUnit(false);
    case State::kAfterEvents:
      return ParseAfterEvents();
    case State::kTrailing:
      return ParseTrailing();
    case State::kDone:
      return Step::kOk;
  }
  return Step::kOk;
}

Step JsonTraceParser::ParseObjectMember() {
  PROFSH_TRY(SkipWs());
  if (*p_ == '}' && state_ == State::kObjectMember) [[unlikely]] {
    NoteRepair(Repair::kTrailingComma, p_);
    ++p_;
    state_ = State::kTrailing;
    return Step::kOk;
  }
  decode_buf_.clear();
  Text key;
  PROFSH_TRY(ScanString(&key, true));
  PROFSH_TRY(SkipWs());
  PROFSH_TRY(Expect(':', "':' after a member name"));
  PROFSH_TRY(SkipWs());
  std::string_view k = View(key);
  if (k == "traceEvents") {
    if (*p_ != '[') return Fail(p_, "\"traceEvents\" must be an array");
    ++p_;
    saw_events_ = true;
    builder_.SetFormat("kineto-json");
    state_ = State::kEventsFirst;
    return Step::kOk;
  }
  const char* value_start = p_;
  PROFSH_TRY(SkipValue(0));
  const char* value_end = p_;
  PROFSH_TRY(SkipWs());
  char sep = *p_;
  if (sep != ',' && sep != '}') return Fail(p_, "expected ',' or '}' after a top-level member");
  ++p_;
  Status s =
      builder_.AddMetadata(std::string(k), std::string_view(value_start, value_end - value_start));
  if (!s.ok()) return Fail(value_start, s.message());
  state_ = sep == ',' ? State::kObjectMember : State::kTrailing;
  return Step::kOk;
}

Step JsonTraceParser::ParseAfterEvents() {
  if (bare_array_) {
    state_ = State::kTrailing;
    return Step::kOk;
  }
  PROFSH_TRY(SkipWs());
  if (*p_ == ',') {
    ++p_;
    state_ = State::kObjectMember;
    return Step::kOk;
  }
  if (*p_ == '}') {
    ++p_;
    state_ = State::kTrailing;
    return Step::kOk;
  }
  return Fail(p_, "expected ',' or '}' after the traceEvents array");
}

Step JsonTraceParser::ParseTrailing() {
  while (p_ < end_ && IsSpace(*p_)) ++p_;
  if (p_ < end_) return Fail(p_, "unexpected data after the end of the trace");
  if (!eof_) return Step::kNeedMore;
  state_ = State::kDone;
  return Step::kOk;
}

Step JsonTraceParser::ParseEventUnit(bool first) {
  PROFSH_TRY(SkipWs());
  if (first && *p_ == ']') {
    ++p_;
    state_ = State::kAfterEvents;
    return Step::kOk;
  }
  if (*p_ != '{') {
    if (!first && *p_ == ']') {
      // A trailing comma before the bracket, as streaming writers leave it.
      NoteRepair(Repair::kTrailingComma, p_);
      ++p_;
      state_ = State::kAfterEvents;
      return Step::kOk;
    }
    return FailEvent(p_, std::string("expected an event object, found '") + *p_ + "'");
  }
  event_start_ = p_;
  phase_hint_ = 0;
  matched_shape_ = nullptr;
  in_template_ = true;
  const bool matched = TryEventTemplate();
  in_template_ = false;
  if (!matched) PROFSH_TRY(ParseEventObject(/*decode_fields=*/false));
  event_end_ = p_;
  // Resolve everything now (interning is idempotent, so a rollback costs nothing) but append
  // the event only once its separator has been seen.
  while (p_ < end_ && IsSpace(*p_)) ++p_;
  bool at_end_without_separator = p_ == end_;
  if (at_end_without_separator && !eof_) return Step::kNeedMore;
  PROFSH_TRY(CommitEvent());
  ++event_index_;
  if (at_end_without_separator) {
    // The file ends after a whole event: the array format allows it, the object format's
    // closing brackets are missing.
    if (!bare_array_) NoteRepair(Repair::kTraceCut, p_);
    state_ = State::kDone;
    return Step::kOk;
  }
  char sep = *p_;
  if (sep == ',') {
    ++p_;
    state_ = State::kEventsNext;
    return Step::kOk;
  }
  if (sep == ']') {
    ++p_;
    state_ = State::kAfterEvents;
    return Step::kOk;
  }
  if (sep == '{') {
    NoteRepair(Repair::kMissingComma, p_);
    state_ = State::kEventsNext;
    return Step::kOk;
  }
  return Fail(p_,
              "expected ',' or ']' after traceEvents[" + std::to_string(event_index_ - 1) + "]");
}

// Parses one event object. With decode_fields false (the fast path) arguments are only
// validated and their signature recorded; with true, every field is also decoded into fields_,
// which is needed once per distinct signature to build its schema.
Step JsonTraceParser::ParseEventObject(bool decode_fields) {
  ++p_;  // '{'
  decode_buf_.clear();
  fields_.clear();
  signature_.Clear();
  holes_.clear();
  made_decisions_ = false;
  has_ph_ = has_ts_ = has_dur_ = has_name_ = has_cat_ = has_pid_ = has_tid_ = false;
  bad_ts_ = bad_dur_ = saw_field_ = false;
  PROFSH_TRY(SkipWs());
  if (*p_ == '}') {
    ++p_;
    return Step::kOk;
  }
  saw_field_ = true;
  while (true) {
    PROFSH_TRY(SkipWs());
    const char* key_at = p_;
    if (*p_ == '}') [[unlikely]] {
      NoteRepair(Repair::kTrailingComma, p_);
      ++p_;
      return Step::kOk;
    }
    Text key;
    PROFSH_TRY(ScanString(&key, true));
    PROFSH_TRY(SkipWs());
    PROFSH_TRY(Expect(':', "':' after a field name"));
    PROFSH_TRY(SkipWs());
    std::string_view k = View(key);
    const char* value_at = p_;
    bool handled = true;
    switch (k.size()) {
      case 2:
        if (k == "ph") {
          // As Perfetto reads it: the first letter of a string; no letter is no phase.
          if (*p_ != '"') {
            PROFSH_TRY(SkipValue(0));
            break;
          }
          Text ph;
          PROFSH_TRY(ScanString(&ph, true));
          std::string_view v = View(ph);
          if (v.empty()) break;
          if (v.size() > 1) NoteEventRepair(Repair::kLongPhase);
          ph_ = v[0];
          has_ph_ = true;
        } else if (k == "ts") {
          bool valid;
          PROFSH_TRY(ParseTime(&ts_, "ts", &valid));
          has_ts_ = valid;
          bad_ts_ = !valid;
          if (valid) holes_.push_back({value_at, p_, {HoleKind::kTs, 0}});
        } else {
          handled = false;
        }
        break;
      case 3:
        if (k == "dur") {
          bool valid;
          PROFSH_TRY(ParseTime(&dur_, "dur", &valid));
          has_dur_ = valid;
          bad_dur_ = !valid;
          if (valid) holes_.push_back({value_at, p_, {HoleKind::kDur, 0}});
        } else if (k == "tts" && *p_ == '"') {
          PROFSH_TRY(ParseNumberInString(key, key_at, decode_fields));
        } else if (k == "pid") {
          PROFSH_TRY(ParseIdent(&pid_, "pid"));
          has_pid_ = true;
        } else if (k == "tid") {
          PROFSH_TRY(ParseIdent(&tid_, "tid"));
          has_tid_ = true;
        } else if (k == "cat") {
          if (*p_ != '"') return FailEvent(value_at, "field 'cat' must be a string");
          PROFSH_TRY(ScanString(&cat_, true));
          has_cat_ = true;
        } else {
          handled = false;
        }
        break;
      case 4:
        if (k == "name") {
          if (*p_ != '"') return FailEvent(value_at, "field 'name' must be a string");
          PROFSH_TRY(ScanString(&name_, true));
          has_name_ = true;
          holes_.push_back({value_at, p_, {HoleKind::kName, 0}});
        } else if (k == "args") {
          if (*p_ != '{') return FailEvent(value_at, "field 'args' must be an object");
          PROFSH_TRY(ParseArgsObject(decode_fields));
        } else if (k == "tdur" && *p_ == '"') {
          PROFSH_TRY(ParseNumberInString(key, key_at, decode_fields));
        } else {
          handled = false;
        }
        break;
      default:
        handled = false;
    }
    if (!handled) PROFSH_TRY(ParseFieldValue(key, key_at, true, decode_fields));
    PROFSH_TRY(SkipWs());
    if (*p_ == ',') {
      ++p_;
      continue;
    }
    if (*p_ == '}') {
      ++p_;
      return Step::kOk;
    }
    return FailEvent(p_, "expected ',' or '}' in an event object");
  }
}

Step JsonTraceParser::ParseArgsObject(bool decode_fields) {
  piece_start_ = p_;
  ++p_;  // '{'
  PROFSH_TRY(SkipWs());
  if (*p_ == '}') {
    ++p_;
    return Step::kOk;  // an empty args object stores nothing
  }
  while (true) {
    PROFSH_TRY(SkipWs());
    if (*p_ == '}') [[unlikely]] {
      // A trailing comma: the signature keeps the bytes as written.
      NoteRepair(Repair::kTrailingComma, p_);
      ++p_;
      signature_.AddPiece(piece_start_, static_cast<size_t>(p_ - piece_start_));
      return Step::kOk;
    }
    Text key;
    PROFSH_TRY(ScanString(&key, true));
    PROFSH_TRY(SkipWs());
    PROFSH_TRY(Expect(':', "':' after an argument name"));
    PROFSH_TRY(SkipWs());
    PROFSH_TRY(ParseFieldValue(key, nullptr, false, decode_fields));
    PROFSH_TRY(SkipWs());
    if (*p_ == ',') {
      ++p_;
      continue;
    }
    if (*p_ == '}') {
      ++p_;
      signature_.AddPiece(piece_start_, static_cast<size_t>(p_ - piece_start_));
      return Step::kOk;
    }
    return FailEvent(p_, "expected ',' or '}' in the args object");
  }
}

bool JsonTraceParser::IsInline(std::string_view key, bool top_level, bool is_number) {
  if (!is_number) return false;
  char phase = has_ph_ ? ph_ : phase_hint_;
  made_decisions_ = true;
  decided_with_phase_ = phase;
  return phase == 'C' || IsVolatileKey(key, top_level);
}

// One argument (inside "args") or one extra event-level field ("id", "bp", "s", ...). Its bytes
// go into the signature, except a volatile number, which is kept as an inline value.
Step JsonTraceParser::ParseFieldValue(const Text& key, const char* key_at, bool top_level,
                                      bool decode_fields) {
  RawField f;
  f.key = key;
  f.top_level = top_level;
  const char* value_at = p_;
  char c = *p_;
  bool is_number = false;
  const char* number_begin = nullptr;
  bool is_integer = false;
  if (c == '"') {
    f.type = ArgType::kString;
    PROFSH_TRY(ScanString(&f.text, decode_fields));
  } else if (c == '{' || c == '[') {
    PROFSH_TRY(SkipValue(0));
    f.type = ArgType::kJson;
    f.text.raw = value_at;
    f.text.size = static_cast<uint32_t>(p_ - value_at);
  } else if (c == 't') {
    PROFSH_TRY(ScanLiteral("true"));
    f.type = ArgType::kBool;
    f.bool_value = true;
  } else if (c == 'f') {
    PROFSH_TRY(ScanLiteral("false"));
    f.type = ArgType::kBool;
  } else if (c == 'n') {
    PROFSH_TRY(ScanLiteral("null"));
    f.type = ArgType::kNull;
  } else {
    PROFSH_TRY(ScanNumber(&number_begin, &is_integer));
    is_number = true;
  }
  bool inline_value = IsInline(View(key), top_level, is_number);
  if (is_number && (inline_value || decode_fields))
    f.SetNumber(json::ConvertNumber(number_begin, p_, is_integer));
  if (inline_value) {
    const ArgValue v = f.Number();
    const char* piece_end = top_level ? value_at : number_begin;
    const char* from = top_level ? key_at : piece_start_;
    signature_.AddPiece(from, static_cast<size_t>(piece_end - from));
    signature_.AddInline(v);
    uint8_t type = static_cast<uint8_t>(v.type) | (ArgStore::InlineWords(v) == 2 ? 0x80 : 0);
    holes_.push_back({number_begin, p_, {HoleKind::kInline, type}});
    if (!top_level) piece_start_ = p_;
  } else if (top_level) {
    signature_.AddPiece(key_at, static_cast<size_t>(p_ - key_at));
  }
  if (decode_fields) {
    f.inline_value = inline_value;
    fields_.push_back(f);
  }
  return Step::kOk;
}

Step JsonTraceParser::ParseNumberInString(const Text& key, const char* key_at, bool decode_fields) {
  const char* value_at = p_;
  Text t;
  PROFSH_TRY(ScanString(&t, true));
  std::string_view v = View(t);
  bool is_integer;
  if (!IsJsonNumber(v.data(), v.data() + v.size(), &is_integer)) {
    // Not a number after all: an ordinary string field.
    p_ = value_at;
    return ParseFieldValue(key, key_at, true, decode_fields);
  }
  NoteEventRepair(Repair::kNumberAsString);
  RawField f;
  f.key = key;
  f.top_level = true;
  f.inline_value = true;
  f.SetNumber(json::ConvertNumber(v.data(), v.data() + v.size(), is_integer));
  signature_.AddPiece(key_at, static_cast<size_t>(value_at - key_at));
  signature_.AddInline(f.Number());
  if (decode_fields) fields_.push_back(f);
  return Step::kOk;
}

Step JsonTraceParser::ParseIdent(Ident* out, const char* field) {
  if (*p_ == '"') {
    Text t;
    PROFSH_TRY(ScanString(&t, true));
    std::string_view v = View(t);
    bool is_integer = false;
    if (IsJsonNumber(v.data(), v.data() + v.size(), &is_integer) && is_integer) [[unlikely]] {
      // "pid": "12" is process 12, as catapult reads it (Perfetto would name a process "12").
      json::Number n = json::ConvertNumber(v.data(), v.data() + v.size(), true);
      if (n.kind == json::NumberKind::kInt) {
        NoteEventRepair(Repair::kIdentAsString);
        out->is_string = false;
        out->str = 0;
        out->number = n.i;
        return Step::kOk;
      }
    }
    out->is_string = true;
    out->str = builder_.InternString(View(t));
    out->number = 0;
    return Step::kOk;
  }
  const char* at = p_;
  if (*p_ != '-' && !IsDigit(*p_)) {
    return FailEvent(at, std::string("field '") + field + "' must be a number or a string");
  }
  const char* begin;
  bool is_integer;
  PROFSH_TRY(ScanNumber(&begin, &is_integer));
  json::Number n = json::ConvertNumber(begin, p_, is_integer);
  if (n.kind != json::NumberKind::kInt) {
    return FailEvent(at, std::string("field '") + field + "' must be an integer");
  }
  out->is_string = false;
  out->str = 0;
  out->number = n.i;
  return Step::kOk;
}

bool JsonTraceParser::FastMicros(int64_t* out) {
  const char* q = p_;
  if (end_ - q < 32 || !IsDigit(*q) || (*q == '0' && IsDigit(q[1]))) return false;
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

Step JsonTraceParser::ParseTime(int64_t* out, const char* field, bool* valid) {
  *valid = true;
  if (FastMicros(out)) return Step::kOk;
  const char* at = p_;
  if (*p_ == '-' || IsDigit(*p_)) return ParseTimeNumber(out, field);
  if (*p_ == '"') {
    Text t;
    PROFSH_TRY(ScanString(&t, true));
    std::string_view v = View(t);
    bool is_integer;
    if (IsJsonNumber(v.data(), v.data() + v.size(), &is_integer) &&
        json::MicrosToNanos(v.data(), v.data() + v.size(), is_integer, out)) {
      NoteEventRepair(Repair::kNumberAsString);
      return Step::kOk;
    }
  } else if (*p_ == '{' || *p_ == '[' || *p_ == 't' || *p_ == 'f' || *p_ == 'n') {
    PROFSH_TRY(SkipValue(0));
  } else {
    return FailEvent(at, std::string("field '") + field + "' must be a number, got '" +
                             std::string(1, *p_) + "'");
  }
  *valid = false;
  return Step::kOk;
}

Step JsonTraceParser::ParseTimeNumber(int64_t* out, const char* field) {
  const char* at = p_;
  const char* begin;
  bool is_integer;
  PROFSH_TRY(ScanNumber(&begin, &is_integer));
  if (!json::MicrosToNanos(begin, p_, is_integer, out)) {
    return FailEvent(at, std::string("field '") + field + "' is out of range");
  }
  return Step::kOk;
}

Step JsonTraceParser::DropEvent(Repair why) {
  // What was repaired in the event goes with it: the unit so far is this event alone.
  if (!reparsing_) unit_repairs_.clear();
  NoteEventRepair(why);
  unit_drops_.push_back(event_index_);
  return Step::kOk;
}

Step JsonTraceParser::CommitEvent() {
  if (matched_shape_ != nullptr) {
    // Everything but the holes is the template's, which was valid when it was recorded.
    EventShape& shape = *matched_shape_;
    const std::string_view name = has_name_ ? View(name_) : std::string_view();
    signature_.InlineWords(&inline_words_);
    const int64_t dur = shape.phase == 'X' ? dur_ : 0;
    if (shape.last_event_template != UINT32_MAX && shape.last_name == name) {
      builder_.AddEventWithTemplate(shape.last_event_template, shape.has_ts ? ts_ : 0, dur,
                                    inline_words_);
      return Step::kOk;
    }
    EventFields e;
    e.phase = shape.phase;
    e.ts = shape.has_ts ? ts_ : 0;
    e.dur = dur;
    e.name = name;
    e.category = shape.category;
    e.pid = shape.pid;
    e.tid = shape.tid;
    shape.last_event_template = builder_.TemplateOf(e, shape.schema);
    shape.last_name = builder_.TemplateName(shape.last_event_template);
    builder_.AddEventWithTemplate(shape.last_event_template, e.ts, e.dur, inline_words_);
    return Step::kOk;
  }
  // What Perfetto drops (json_tokenizer_failure, json_parser_failure) is dropped and counted.
  if (!has_ph_) [[unlikely]]
    return DropEvent(saw_field_ ? Repair::kMissingPhase : Repair::kEmptyEvent);
  if (ph_ != 'M') {
    if (bad_ts_ || bad_dur_) [[unlikely]]
      return DropEvent(Repair::kBadTime);
    if (!has_ts_) [[unlikely]]
      return DropEvent(Repair::kMissingTs);
    if (ph_ == 'X' && !has_dur_) [[unlikely]]
      return DropEvent(Repair::kCompleteWithoutDur);
  }
  if (!has_pid_) [[unlikely]] {
    NoteEventRepair(Repair::kMissingPid);
    pid_ = Ident{};
  }
  if (!has_tid_) [[unlikely]] {
    // Perfetto's rule: the thread of an event without "tid" is tid = pid.
    NoteEventRepair(Repair::kMissingTid);
    tid_ = pid_;
  }
  uint32_t schema = TraceBuilder::kNoArgs;
  if (!signature_.empty()) {
    if (made_decisions_ && (decided_with_phase_ == 'C') != (ph_ == 'C')) {
      // "ph" came after the arguments and changes which numbers are inline: parse again.
      const char* resume = p_;
      p_ = event_start_;
      phase_hint_ = ph_;
      reparsing_ = true;
      Step again = ParseEventObject(false);
      reparsing_ = false;
      PROFSH_TRY(again);
      p_ = resume;
    }
    uint64_t hash = signature_.Hash();
    auto found = builder_.FindSchema(signature_, hash);
    if (found) {
      schema = *found;
    } else {
      // A signature not seen before: decode the fields once to build its schema.
      const char* resume = p_;
      p_ = event_start_;
      phase_hint_ = ph_;
      reparsing_ = true;
      Step again = ParseEventObject(true);
      reparsing_ = false;
      PROFSH_TRY(again);
      p_ = resume;
      builder_.BeginArgs();
      for (const RawField& f : fields_) {
        ArgValue v;
        v.type = f.type;
        v.bool_value = f.bool_value;
        v.int_value = f.int_value;
        v.double_value = f.double_value;
        builder_.AddArg(View(f.key), f.top_level, v, View(f.text), f.inline_value);
      }
      schema = builder_.BuildSchema();
      builder_.RememberSchema(signature_, hash, schema);
    }
    signature_.InlineWords(&inline_words_);
  } else {
    inline_words_.clear();
  }
  EventFields e;
  e.phase = ph_;
  e.ts = has_ts_ ? ts_ : 0;
  e.dur = ph_ == 'X' ? dur_ : 0;
  e.name = has_name_ ? View(name_) : std::string_view();
  e.category = has_cat_ ? View(cat_) : std::string_view();
  e.pid = pid_;
  e.tid = tid_;
  builder_.AddEvent(e, schema, inline_words_);

  EventShape shape;
  shape.phase = ph_;
  shape.category.assign(e.category);
  shape.pid = e.pid;
  shape.tid = e.tid;
  shape.has_ts = has_ts_;
  shape.has_dur = has_dur_;
  shape.schema = schema;
  // A repaired event is no template: the events that match it would skip the repair's count.
  if (unit_repairs_.empty())
    templates_.Remember(event_start_, event_end_, holes_, std::move(shape));
  return Step::kOk;
}

bool JsonTraceParser::TryEventTemplate() {
  uint32_t prefix_id;
  const EventTemplates::Prefix* prefix = templates_.FindPrefix(p_, end_, &prefix_id);
  if (prefix == nullptr) return false;
  const char* q = p_ + prefix->text.size();
  decode_buf_.clear();
  signature_.Clear();
  has_name_ = false;
  std::string_view first_text;
  if (prefix->has_hole) {
    // The first hole decides the candidates; for an inline number its type is checked per shape.
    Hole first = prefix->first;
    const char* saved = p_;
    if (first.kind == HoleKind::kInline && FastSmallInt(q)) {
      // An id or a count, the usual first hole of flow events.
    } else if (first.kind == HoleKind::kInline) {
      p_ = q;
      const char* begin;
      bool is_integer;
      if (ScanNumber(&begin, &is_integer) != Step::kOk) {
        p_ = saved;
        return false;
      }
      json::Number n = json::ConvertNumber(begin, p_, is_integer);
      ArgValue v;
      v.type = n.kind == json::NumberKind::kDouble ? ArgType::kDouble
               : n.kind == json::NumberKind::kInt  ? ArgType::kInt
                                                   : ArgType::kUInt;
      v.int_value = n.i;
      v.double_value = n.d;
      signature_.AddInline(v);
    } else if (ParseHole(first, q) != Step::kOk) {
      p_ = saved;
      return false;
    }
    if (first.kind == HoleKind::kName)
      first_text = std::string_view(q, static_cast<size_t>(p_ - q));
    q = p_;
    p_ = saved;
  }
  EventTemplates::ShapeSlots* slots = templates_.Candidates(prefix_id, first_text);
  if (slots == nullptr) {
    p_ = event_start_;
    return false;
  }
  for (int32_t id : EventTemplates::Ids(*slots)) {
    EventShape& shape = templates_.shape(id);
    if (prefix->has_hole && prefix->first.kind == HoleKind::kInline &&
        shape.parts[0].hole.inline_type != signature_.inline_type(0)) {
      continue;
    }
    size_t inlines = signature_.inline_count();
    if (MatchShape(shape, q)) {
      EventTemplates::Matched(*slots, id);
      matched_shape_ = &shape;
      return true;
    }
    signature_.Truncate(0, inlines);
  }
  EventTemplates::Missed(*slots);
  p_ = event_start_;
  return false;
}

// Matches the rest of an event (after its first hole) against one shape.
bool JsonTraceParser::MatchShape(const EventShape& shape, const char* q) {
  const char* saved = p_;
  const char* text = shape.text.data();
  uint32_t piece_begin = 0;
  for (size_t i = 0; i < shape.parts.size(); ++i) {
    const EventShape::Part& part = shape.parts[i];
    if (i > 0) {
      if (ParseHole(part.hole, q) != Step::kOk) {
        p_ = saved;
        return false;
      }
      q = p_;
    }
    const size_t size = part.piece_end - piece_begin;
    if (static_cast<size_t>(end_ - q) < size || std::memcmp(q, text + piece_begin, size) != 0) {
      p_ = saved;
      return false;
    }
    q += size;
    piece_begin = part.piece_end;
  }
  has_name_ = shape.has_name_hole;
  p_ = q;
  return true;
}

// A non-negative integer of up to nine digits at `at` (ids and counts: most inline numbers) is
// added to the signature as a one-word int, and p_ ends after it. Anything else is left to the
// general path, which also reports what is wrong with it.
bool JsonTraceParser::FastSmallInt(const char* at) {
  if (end_ - at < 10) return false;
  uint32_t v = 0;
  int n = 0;
  while (n < 9 && IsDigit(at[n])) v = v * 10 + static_cast<uint32_t>(at[n++] - '0');
  const char next = at[n];
  if (n == 0 || (at[0] == '0' && n > 1) || IsDigit(next) || next == '.' || next == 'e' ||
      next == 'E') {
    return false;
  }
  signature_.AddInlineInt(static_cast<int32_t>(v));
  p_ = at + n;
  return true;
}

// Parses one hole's value at `at`; p_ ends after it. Inline numbers must have the hole's type.
Step JsonTraceParser::ParseHole(const Hole& hole, const char* at) {
  p_ = at;
  switch (hole.kind) {
    case HoleKind::kName:
      if (p_ >= end_ || *p_ != '"') return Step::kError;
      return ScanString(&name_, true);
    case HoleKind::kTs:
      if (FastMicros(&ts_)) return Step::kOk;
      return *p_ == '-' || IsDigit(*p_) ? ParseTimeNumber(&ts_, "ts") : Step::kError;
    case HoleKind::kDur:
      if (FastMicros(&dur_)) return Step::kOk;
      return *p_ == '-' || IsDigit(*p_) ? ParseTimeNumber(&dur_, "dur") : Step::kError;
    case HoleKind::kInline: {
      if (hole.inline_type == static_cast<uint8_t>(ArgType::kInt) && FastSmallInt(at)) {
        return Step::kOk;
      }
      const char* begin;
      bool is_integer;
      PROFSH_TRY(ScanNumber(&begin, &is_integer));
      json::Number n = json::ConvertNumber(begin, p_, is_integer);
      ArgValue v;
      v.type = n.kind == json::NumberKind::kDouble ? ArgType::kDouble
               : n.kind == json::NumberKind::kInt  ? ArgType::kInt
                                                   : ArgType::kUInt;
      v.int_value = n.i;
      v.double_value = n.d;
      uint8_t type = static_cast<uint8_t>(v.type) | (ArgStore::InlineWords(v) == 2 ? 0x80 : 0);
      if (type != hole.inline_type) return Step::kError;
      signature_.AddInline(v);
      return Step::kOk;
    }
  }
  return Step::kError;
}

Step JsonTraceParser::SkipWsSlow() {
  while (p_ < end_ && IsSpace(*p_)) ++p_;
  return p_ < end_ ? Step::kOk : Step::kNeedMore;
}

Step JsonTraceParser::ExpectSlow(char c, const char* what) {
  if (p_ >= end_) return Step::kNeedMore;
  if (*p_ != c) return Fail(p_, std::string("expected ") + what);
  ++p_;
  return Step::kOk;
}

Step JsonTraceParser::ScanStringSlow(Text* out, bool decode) {
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
      if (!NoteRepair(Repair::kControlCharacter, p_)) return Step::kError;
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

Step JsonTraceParser::ScanNumber(const char** begin, bool* is_integer) {
  const char* start = p_;
  const char* q = p_;
  if (q < end_ && *q == '-') ++q;
  if (q >= end_) return Step::kNeedMore;
  if (*q == '0') {
    ++q;
  } else if (IsDigit(*q)) {
    while (end_ - q >= 8) {
      int n = json::LeadingDigits8(q);
      q += n;
      if (n < 8) break;
    }
    while (q < end_ && IsDigit(*q)) ++q;
  } else {
    return Fail(q, "invalid number");
  }
  bool integer = true;
  if (q < end_ && *q == '.') {
    ++q;
    if (q >= end_) return Step::kNeedMore;
    if (!IsDigit(*q)) return Fail(q, "invalid number: digits must follow '.'");
    while (end_ - q >= 8) {
      int n = json::LeadingDigits8(q);
      q += n;
      if (n < 8) break;
    }
    while (q < end_ && IsDigit(*q)) ++q;
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

Step JsonTraceParser::ScanLiteral(std::string_view word) {
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

Step JsonTraceParser::SkipValue(int depth) {
  if (depth > kMaxDepth) return Fail(p_, "JSON nested too deeply");
  PROFSH_TRY(SkipWs());
  char c = *p_;
  if (c == '"') {
    Text ignored;
    return ScanString(&ignored, false);
  }
  if (c == '{') {
    ++p_;
    PROFSH_TRY(SkipWs());
    if (*p_ == '}') {
      ++p_;
      return Step::kOk;
    }
    while (true) {
      PROFSH_TRY(SkipWs());
      Text ignored;
      PROFSH_TRY(ScanString(&ignored, false));
      PROFSH_TRY(SkipWs());
      PROFSH_TRY(Expect(':', "':' after a member name"));
      PROFSH_TRY(SkipValue(depth + 1));
      PROFSH_TRY(SkipWs());
      if (*p_ == ',') {
        ++p_;
        PROFSH_TRY(SkipWs());
        if (*p_ == '}') [[unlikely]] {
          if (!NoteRepair(Repair::kTrailingComma, p_)) return Step::kError;
          ++p_;
          return Step::kOk;
        }
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return Step::kOk;
      }
      return Fail(p_, "expected ',' or '}' in an object");
    }
  }
  if (c == '[') {
    ++p_;
    PROFSH_TRY(SkipWs());
    if (*p_ == ']') {
      ++p_;
      return Step::kOk;
    }
    while (true) {
      PROFSH_TRY(SkipValue(depth + 1));
      PROFSH_TRY(SkipWs());
      if (*p_ == ',') {
        ++p_;
        PROFSH_TRY(SkipWs());
        if (*p_ == ']') [[unlikely]] {
          if (!NoteRepair(Repair::kTrailingComma, p_)) return Step::kError;
          ++p_;
          return Step::kOk;
        }
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        return Step::kOk;
      }
      return Fail(p_, "expected ',' or ']' in an array");
    }
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

class JsonTraceImporter final : public Importer {
 public:
  std::string_view name() const override { return "json"; }
  bool CanRead(std::string_view head) const override {
    size_t i = 0;
    if (head.size() >= 3 && static_cast<unsigned char>(head[0]) == 0xEF &&
        static_cast<unsigned char>(head[1]) == 0xBB &&
        static_cast<unsigned char>(head[2]) == 0xBF) {
      i = 3;  // a UTF-8 byte order mark
    }
    while (i < head.size() && IsSpace(head[i])) ++i;
    return i < head.size() && (head[i] == '{' || head[i] == '[');
  }
  Result<std::unique_ptr<Trace>> Read(InputSource& input) const override {
    auto trace = std::make_unique<Trace>();
    // A trace cut short keeps its whole events, compressed or not.
    input.KeepDataBeforeCut();
    JsonTraceParser parser(input, *trace);
    Status s = parser.Run();
    if (!s.ok()) return Error{s.message()};
    return trace;
  }
};

}  // namespace

std::unique_ptr<Importer> MakeJsonTraceImporter() {
  return std::make_unique<JsonTraceImporter>();
}

}  // namespace profsh
