// Streaming reader for Chrome Trace Event JSON: Kineto's object format ({"traceEvents": [...]}),
// both timestamp conventions, and the bare-array format of PyTorch's legacy export.
//
// The reader never builds a DOM. It walks the input one unit at a time (a top-level member, or
// one event with its separator); when a unit runs past the bytes at hand it rolls back to the
// unit's start, reads more, and tries again, so gzip input is inflated in fixed-size chunks.
// The jobs are split in three: json_tokenizer scans bytes into values, chrome_event_schema turns
// one event into the Trace (by a template of an earlier event where one matches), and this file
// drives them over the document: its top-level members, the traceEvents array, where the input
// ends, and when a unit's repairs count.
//
// What Perfetto's and catapult's readers accept beyond the format (numbers written as strings,
// trailing commas, a file cut short, raw control characters, events without "ph", "ts", "tid",
// ...) is read too, on paths that only run where the strict reading fails; each repair is counted
// by kind (engine/trace/import_repairs.h). A unit's repairs count only once the unit is complete,
// as a unit may be parsed again after a refill.
#include <string>

#include "engine/importers/chrome_event_schema.h"
#include "engine/importers/importer.h"
#include "engine/importers/json_tokenizer.h"
#include "engine/trace/trace_builder.h"

namespace profsh {

namespace {

using json::IsSpace;

class JsonTraceParser {
 public:
  JsonTraceParser(InputSource& input, Trace& trace)
      : input_(input), builder_(trace), json_(input), events_(json_, builder_) {}

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

  // Counts the repairs and drops of the unit just completed.
  void FlushRepairs();
  // Where the input ended early, if it did: every whole event before it is kept.
  bool AcceptCut(const char* unit_start);

  InputSource& input_;
  TraceBuilder builder_;
  JsonTokenizer json_;
  ChromeEventReader events_;
  State state_ = State::kStart;
  bool bare_array_ = false;
  bool saw_events_ = false;
  uint64_t event_index_ = 0;
};

void JsonTraceParser::FlushRepairs() {
  UnitRepairs& unit = json_.repairs();
  for (const UnitRepairs::Pending& r : unit.repairs())
    builder_.repairs().Note(r.kind, r.place, r.where);
  for (uint64_t event : unit.drops()) builder_.NoteDroppedEvent(event);
  unit.Clear();
}

// The input ended inside a unit. A trace cut short (a writer that was killed) keeps every whole
// event before the cut, as Perfetto does; with nothing of traceEvents read yet there is nothing
// to keep.
bool JsonTraceParser::AcceptCut(const char* unit_start) {
  json_.repairs().Clear();
  if (!saw_events_) return false;
  const char* q = unit_start;
  while (q < json_.end() && IsSpace(*q)) ++q;
  const bool events = state_ == State::kEventsFirst || state_ == State::kEventsNext;
  // The Chrome JSON Array Format allows the closing bracket to be missing.
  if (bare_array_ && events && q == json_.end()) return true;
  builder_.repairs().Note(Repair::kTraceCut, ImportRepairs::Place::kByte,
                          json_.OffsetOf(unit_start));
  return true;
}

Status JsonTraceParser::Run() {
  std::string_view whole = input_.WholeContent();
  builder_.ReserveForBytes(whole.empty() ? input_.ContentSizeHint() : whole.size());
  if (!json_.Open()) return Error{json_.error()};

  while (state_ != State::kDone) {
    const char* unit_start = json_.pos();
    Step step = ParseUnit();
    if (step == Step::kOk) {
      if (!json_.repairs().empty()) [[unlikely]]
        FlushRepairs();
      json_.ReleaseParsed();
      continue;
    }
    if (step == Step::kError) return Error{json_.error()};
    json_.set_pos(unit_start);
    json_.repairs().Clear();
    if (!json_.Refill(unit_start)) {
      if (!json_.error().empty()) return Error{json_.error()};
      // Out of input in the middle of a unit.
      if (AcceptCut(json_.pos())) break;
      json_.Fail(json_.end(), std::string("unexpected end of file") +
                                  (state_ == State::kEventsFirst || state_ == State::kEventsNext
                                       ? " inside traceEvents[" + std::to_string(event_index_) + "]"
                                       : "") +
                                  (input_.CutShort().empty() ? " (is the file truncated?)"
                                                             : " (" + input_.CutShort() + ")"));
      return Error{json_.error()};
    }
  }
  if (!saw_events_) {
    return Error{input_.path() + ": the JSON object has no \"traceEvents\" array"};
  }
  // A compressed file cut between two events (a bare array needs no closing bracket) is cut all
  // the same.
  if (!input_.CutShort().empty() && builder_.repairs().count(Repair::kTraceCut) == 0) {
    builder_.repairs().Note(Repair::kTraceCut, ImportRepairs::Place::kByte,
                            json_.OffsetOf(json_.end()));
  }
  return builder_.Finish();
}

Step JsonTraceParser::ParseUnit() {
  switch (state_) {
    case State::kStart: {
      PROFSH_TRY(json_.SkipWs());
      if (json_.peek() == '{') {
        json_.Advance();
        state_ = State::kObjectFirstMember;
        return Step::kOk;
      }
      if (json_.peek() == '[') {
        json_.Advance();
        bare_array_ = true;
        saw_events_ = true;
        builder_.SetFormat("chrome-json-array");
        state_ = State::kEventsFirst;
        return Step::kOk;
      }
      return json_.Fail(json_.pos(), "expected '{' or '[' at the start of a JSON trace");
    }
    case State::kObjectFirstMember: {
      PROFSH_TRY(json_.SkipWs());
      if (json_.peek() == '}') {
        json_.Advance();
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
  PROFSH_TRY(json_.SkipWs());
  if (json_.peek() == '}' && state_ == State::kObjectMember) [[unlikely]] {
    json_.NoteRepairAt(Repair::kTrailingComma, json_.pos());
    json_.Advance();
    state_ = State::kTrailing;
    return Step::kOk;
  }
  json_.ClearDecoded();
  Text key;
  PROFSH_TRY(json_.ScanMemberName(&key, true, "':' after a member name"));
  std::string_view k = json_.View(key);
  if (k == "traceEvents") {
    if (json_.peek() != '[') return json_.Fail(json_.pos(), "\"traceEvents\" must be an array");
    json_.Advance();
    saw_events_ = true;
    builder_.SetFormat("kineto-json");
    state_ = State::kEventsFirst;
    return Step::kOk;
  }
  const char* value_start = json_.pos();
  PROFSH_TRY(json_.SkipValue(0));
  const char* value_end = json_.pos();
  PROFSH_TRY(json_.SkipWs());
  char sep = json_.peek();
  if (sep != ',' && sep != '}')
    return json_.Fail(json_.pos(), "expected ',' or '}' after a top-level member");
  json_.Advance();
  Status s =
      builder_.AddMetadata(std::string(k), std::string_view(value_start, value_end - value_start));
  if (!s.ok()) return json_.Fail(value_start, s.message());
  state_ = sep == ',' ? State::kObjectMember : State::kTrailing;
  return Step::kOk;
}

Step JsonTraceParser::ParseAfterEvents() {
  if (bare_array_) {
    state_ = State::kTrailing;
    return Step::kOk;
  }
  PROFSH_TRY(json_.SkipWs());
  if (json_.peek() == ',') {
    json_.Advance();
    state_ = State::kObjectMember;
    return Step::kOk;
  }
  if (json_.peek() == '}') {
    json_.Advance();
    state_ = State::kTrailing;
    return Step::kOk;
  }
  return json_.Fail(json_.pos(), "expected ',' or '}' after the traceEvents array");
}

Step JsonTraceParser::ParseTrailing() {
  while (json_.pos() < json_.end() && IsSpace(json_.peek())) json_.Advance();
  if (json_.pos() < json_.end())
    return json_.Fail(json_.pos(), "unexpected data after the end of the trace");
  if (!json_.eof()) return Step::kNeedMore;
  state_ = State::kDone;
  return Step::kOk;
}

Step JsonTraceParser::ParseEventUnit(bool first) {
  PROFSH_TRY(json_.SkipWs());
  if (first && json_.peek() == ']') {
    json_.Advance();
    state_ = State::kAfterEvents;
    return Step::kOk;
  }
  if (json_.peek() != '{') {
    if (!first && json_.peek() == ']') {
      // A trailing comma before the bracket, as streaming writers leave it.
      json_.NoteRepairAt(Repair::kTrailingComma, json_.pos());
      json_.Advance();
      state_ = State::kAfterEvents;
      return Step::kOk;
    }
    return json_.Fail(json_.pos(), "traceEvents[" + std::to_string(event_index_) +
                                       "]: expected an event object, found '" + json_.peek() + "'");
  }
  PROFSH_TRY(events_.Read(event_index_));
  // Resolve everything now (interning is idempotent, so a rollback costs nothing) but append
  // the event only once its separator has been seen.
  while (json_.pos() < json_.end() && IsSpace(json_.peek())) json_.Advance();
  bool at_end_without_separator = json_.pos() == json_.end();
  if (at_end_without_separator && !json_.eof()) return Step::kNeedMore;
  PROFSH_TRY(events_.Commit());
  ++event_index_;
  if (at_end_without_separator) {
    // The file ends after a whole event: the array format allows it, the object format's
    // closing brackets are missing.
    if (!bare_array_) json_.NoteRepairAt(Repair::kTraceCut, json_.pos());
    state_ = State::kDone;
    return Step::kOk;
  }
  char sep = json_.peek();
  if (sep == ',') {
    json_.Advance();
    state_ = State::kEventsNext;
    return Step::kOk;
  }
  if (sep == ']') {
    json_.Advance();
    state_ = State::kAfterEvents;
    return Step::kOk;
  }
  if (sep == '{') {
    json_.NoteRepairAt(Repair::kMissingComma, json_.pos());
    state_ = State::kEventsNext;
    return Step::kOk;
  }
  return json_.Fail(json_.pos(), "expected ',' or ']' after traceEvents[" +
                                     std::to_string(event_index_ - 1) + "]");
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
