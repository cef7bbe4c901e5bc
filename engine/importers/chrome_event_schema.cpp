#include "engine/importers/chrome_event_schema.h"

#include <string>

#include "engine/importers/event_template_match.h"
#include "engine/trace/kineto_schema.h"

namespace profsh {

using json::IsDigit;

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

ArgValue NumberArg(const json::Number& n) {
  ArgValue v;
  if (n.kind == json::NumberKind::kDouble) {
    v.type = ArgType::kDouble;
    v.double_value = n.d;
  } else {
    v.type = n.kind == json::NumberKind::kInt ? ArgType::kInt : ArgType::kUInt;
    v.int_value = n.i;
  }
  return v;
}

Step ChromeEventReader::FailEvent(const char* at, std::string message) {
  return json_.Fail(at, "traceEvents[" + std::to_string(index_) + "]: " + message);
}

Step ChromeEventReader::Read(uint64_t index) {
  index_ = index;
  event_.start = json_.pos();
  phase_hint_ = 0;
  json_.repairs().set_mode(UnitRepairs::Mode::kRefuse);
  event_.shape = MatchEventTemplate(json_, templates_, event_);
  json_.repairs().set_mode(UnitRepairs::Mode::kRecord);
  if (event_.shape == nullptr) PROFSH_TRY(ParseEventObject(/*decode_fields=*/false));
  event_.end = json_.pos();
  return Step::kOk;
}

Step ChromeEventReader::ParseEventObject(bool decode_fields) {
  json_.Advance();  // '{'
  json_.ClearDecoded();
  fields_.clear();
  event_.signature.Clear();
  event_.holes.clear();
  made_decisions_ = false;
  event_.has_phase = event_.has_ts = event_.has_dur = event_.has_name = event_.has_cat =
      event_.has_pid = event_.has_tid = false;
  event_.bad_ts = event_.bad_dur = event_.saw_field = false;
  PROFSH_TRY(json_.SkipWs());
  if (json_.peek() == '}') {
    json_.Advance();
    return Step::kOk;
  }
  event_.saw_field = true;
  while (true) {
    PROFSH_TRY(json_.SkipWs());
    const char* key_at = json_.pos();
    if (json_.peek() == '}') [[unlikely]] {
      json_.NoteRepairAt(Repair::kTrailingComma, json_.pos());
      json_.Advance();
      return Step::kOk;
    }
    Text key;
    PROFSH_TRY(json_.ScanMemberName(&key, true, "':' after a field name"));
    std::string_view k = json_.View(key);
    const char* value_at = json_.pos();
    bool handled = true;
    switch (k.size()) {
      case 2:
        if (k == "ph") {
          // As Perfetto reads it: the first letter of a string; no letter is no phase.
          if (json_.peek() != '"') {
            PROFSH_TRY(json_.SkipValue(0));
            break;
          }
          Text ph;
          PROFSH_TRY(json_.ScanString(&ph, true));
          std::string_view v = json_.View(ph);
          if (v.empty()) break;
          if (v.size() > 1) NoteEventRepair(Repair::kLongPhase);
          event_.phase = v[0];
          event_.has_phase = true;
        } else if (k == "ts") {
          bool valid;
          PROFSH_TRY(ParseTime(&event_.ts, "ts", &valid));
          event_.has_ts = valid;
          event_.bad_ts = !valid;
          if (valid) event_.holes.push_back({value_at, json_.pos(), {HoleKind::kTs, 0}});
        } else {
          handled = false;
        }
        break;
      case 3:
        if (k == "dur") {
          bool valid;
          PROFSH_TRY(ParseTime(&event_.dur, "dur", &valid));
          event_.has_dur = valid;
          event_.bad_dur = !valid;
          if (valid) event_.holes.push_back({value_at, json_.pos(), {HoleKind::kDur, 0}});
        } else if (k == "tts" && json_.peek() == '"') {
          PROFSH_TRY(ParseNumberInString(key, key_at, decode_fields));
        } else if (k == "pid") {
          PROFSH_TRY(ParseIdent(&event_.pid, "pid"));
          event_.has_pid = true;
        } else if (k == "tid") {
          PROFSH_TRY(ParseIdent(&event_.tid, "tid"));
          event_.has_tid = true;
        } else if (k == "cat") {
          if (json_.peek() != '"') return FailEvent(value_at, "field 'cat' must be a string");
          PROFSH_TRY(json_.ScanString(&event_.cat, true));
          event_.has_cat = true;
        } else {
          handled = false;
        }
        break;
      case 4:
        if (k == "name") {
          if (json_.peek() != '"') return FailEvent(value_at, "field 'name' must be a string");
          PROFSH_TRY(json_.ScanString(&event_.name, true));
          event_.has_name = true;
          event_.holes.push_back({value_at, json_.pos(), {HoleKind::kName, 0}});
        } else if (k == "args") {
          if (json_.peek() != '{') return FailEvent(value_at, "field 'args' must be an object");
          PROFSH_TRY(ParseArgsObject(decode_fields));
        } else if (k == "tdur" && json_.peek() == '"') {
          PROFSH_TRY(ParseNumberInString(key, key_at, decode_fields));
        } else {
          handled = false;
        }
        break;
      default:
        handled = false;
    }
    if (!handled) PROFSH_TRY(ParseFieldValue(key, key_at, true, decode_fields));
    PROFSH_TRY(json_.SkipWs());
    switch (json_.TakeSeparator('}')) {
      case JsonTokenizer::Separator::kComma:
        continue;
      case JsonTokenizer::Separator::kClose:
        return Step::kOk;
      case JsonTokenizer::Separator::kOther:
        return FailEvent(json_.pos(), "expected ',' or '}' in an event object");
    }
  }
}

Step ChromeEventReader::ParseArgsObject(bool decode_fields) {
  piece_start_ = json_.pos();
  json_.Advance();  // '{'
  PROFSH_TRY(json_.SkipWs());
  if (json_.peek() == '}') {
    json_.Advance();
    return Step::kOk;  // an empty args object stores nothing
  }
  while (true) {
    PROFSH_TRY(json_.SkipWs());
    if (json_.peek() == '}') [[unlikely]] {
      // A trailing comma: the signature keeps the bytes as written.
      json_.NoteRepairAt(Repair::kTrailingComma, json_.pos());
      json_.Advance();
      event_.signature.AddPiece(piece_start_, static_cast<size_t>(json_.pos() - piece_start_));
      return Step::kOk;
    }
    Text key;
    PROFSH_TRY(json_.ScanMemberName(&key, true, "':' after an argument name"));
    PROFSH_TRY(ParseFieldValue(key, nullptr, false, decode_fields));
    PROFSH_TRY(json_.SkipWs());
    switch (json_.TakeSeparator('}')) {
      case JsonTokenizer::Separator::kComma:
        continue;
      case JsonTokenizer::Separator::kClose:
        event_.signature.AddPiece(piece_start_, static_cast<size_t>(json_.pos() - piece_start_));
        return Step::kOk;
      case JsonTokenizer::Separator::kOther:
        return FailEvent(json_.pos(), "expected ',' or '}' in the args object");
    }
  }
}

bool ChromeEventReader::IsInline(std::string_view key, bool top_level, bool is_number) {
  if (!is_number) return false;
  char phase = event_.has_phase ? event_.phase : phase_hint_;
  made_decisions_ = true;
  decided_with_phase_ = phase;
  return phase == 'C' || IsVolatileKey(key, top_level);
}

// One argument (inside "args") or one extra event-level field ("id", "bp", "s", ...). Its bytes
// go into the signature, except a volatile number, which is kept as an inline value.
Step ChromeEventReader::ParseFieldValue(const Text& key, const char* key_at, bool top_level,
                                        bool decode_fields) {
  RawField f;
  f.key = key;
  f.top_level = top_level;
  const char* value_at = json_.pos();
  char c = json_.peek();
  bool is_number = false;
  const char* number_begin = nullptr;
  bool is_integer = false;
  if (c == '"') {
    f.value.type = ArgType::kString;
    PROFSH_TRY(json_.ScanString(&f.text, decode_fields));
  } else if (c == '{' || c == '[') {
    PROFSH_TRY(json_.SkipValue(0));
    f.value.type = ArgType::kJson;
    f.text.raw = value_at;
    f.text.size = static_cast<uint32_t>(json_.pos() - value_at);
  } else if (c == 't') {
    PROFSH_TRY(json_.ScanLiteral("true"));
    f.value.type = ArgType::kBool;
    f.value.bool_value = true;
  } else if (c == 'f') {
    PROFSH_TRY(json_.ScanLiteral("false"));
    f.value.type = ArgType::kBool;
  } else if (c == 'n') {
    PROFSH_TRY(json_.ScanLiteral("null"));
    f.value.type = ArgType::kNull;
  } else {
    PROFSH_TRY(json_.ScanNumber(&number_begin, &is_integer));
    is_number = true;
  }
  bool inline_value = IsInline(json_.View(key), top_level, is_number);
  if (is_number && (inline_value || decode_fields))
    f.value = NumberArg(json::ConvertNumber(number_begin, json_.pos(), is_integer));
  if (inline_value) {
    const ArgValue& v = f.value;
    const char* piece_end = top_level ? value_at : number_begin;
    const char* from = top_level ? key_at : piece_start_;
    event_.signature.AddPiece(from, static_cast<size_t>(piece_end - from));
    event_.signature.AddInline(v);
    event_.holes.push_back({number_begin, json_.pos(), Hole::Inline(v)});
    if (!top_level) piece_start_ = json_.pos();
  } else if (top_level) {
    event_.signature.AddPiece(key_at, static_cast<size_t>(json_.pos() - key_at));
  }
  if (decode_fields) {
    f.inline_value = inline_value;
    fields_.push_back(f);
  }
  return Step::kOk;
}

Step ChromeEventReader::ParseNumberInString(const Text& key, const char* key_at,
                                            bool decode_fields) {
  const char* value_at = json_.pos();
  Text t;
  PROFSH_TRY(json_.ScanString(&t, true));
  std::string_view v = json_.View(t);
  bool is_integer;
  if (!IsJsonNumber(v.data(), v.data() + v.size(), &is_integer)) {
    // Not a number after all: an ordinary string field.
    json_.set_pos(value_at);
    return ParseFieldValue(key, key_at, true, decode_fields);
  }
  NoteEventRepair(Repair::kNumberAsString);
  RawField f;
  f.key = key;
  f.top_level = true;
  f.inline_value = true;
  f.value = NumberArg(json::ConvertNumber(v.data(), v.data() + v.size(), is_integer));
  event_.signature.AddPiece(key_at, static_cast<size_t>(value_at - key_at));
  event_.signature.AddInline(f.value);
  if (decode_fields) fields_.push_back(f);
  return Step::kOk;
}

Step ChromeEventReader::ParseIdent(Ident* out, const char* field) {
  if (json_.peek() == '"') {
    Text t;
    PROFSH_TRY(json_.ScanString(&t, true));
    std::string_view v = json_.View(t);
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
    out->str = builder_.InternString(json_.View(t));
    out->number = 0;
    return Step::kOk;
  }
  const char* at = json_.pos();
  if (json_.peek() != '-' && !IsDigit(json_.peek())) {
    return FailEvent(at, std::string("field '") + field + "' must be a number or a string");
  }
  const char* begin;
  bool is_integer;
  PROFSH_TRY(json_.ScanNumber(&begin, &is_integer));
  json::Number n = json::ConvertNumber(begin, json_.pos(), is_integer);
  if (n.kind != json::NumberKind::kInt) {
    return FailEvent(at, std::string("field '") + field + "' must be an integer");
  }
  out->is_string = false;
  out->str = 0;
  out->number = n.i;
  return Step::kOk;
}

Step ChromeEventReader::ParseTime(int64_t* out, const char* field, bool* valid) {
  *valid = true;
  if (json_.FastMicros(out)) return Step::kOk;
  const char* at = json_.pos();
  if (json_.peek() == '-' || IsDigit(json_.peek())) return ParseTimeNumber(out, field);
  if (json_.peek() == '"') {
    Text t;
    PROFSH_TRY(json_.ScanString(&t, true));
    std::string_view v = json_.View(t);
    bool is_integer;
    if (IsJsonNumber(v.data(), v.data() + v.size(), &is_integer) &&
        json::MicrosToNanos(v.data(), v.data() + v.size(), is_integer, out)) {
      NoteEventRepair(Repair::kNumberAsString);
      return Step::kOk;
    }
  } else if (json_.peek() == '{' || json_.peek() == '[' || json_.peek() == 't' ||
             json_.peek() == 'f' || json_.peek() == 'n') {
    PROFSH_TRY(json_.SkipValue(0));
  } else {
    return FailEvent(at, std::string("field '") + field + "' must be a number, got '" +
                             std::string(1, json_.peek()) + "'");
  }
  *valid = false;
  return Step::kOk;
}

Step ChromeEventReader::ParseTimeNumber(int64_t* out, const char* field) {
  const char* at = json_.pos();
  const char* begin;
  bool is_integer;
  PROFSH_TRY(json_.ScanNumber(&begin, &is_integer));
  if (!json::MicrosToNanos(begin, json_.pos(), is_integer, out)) {
    return FailEvent(at, std::string("field '") + field + "' is out of range");
  }
  return Step::kOk;
}

Step ChromeEventReader::DropEvent(Repair why) {
  // What was repaired in the event goes with it: the unit so far is this event alone.
  if (json_.repairs().mode() == UnitRepairs::Mode::kRecord) json_.repairs().ForgetRepairs();
  NoteEventRepair(why);
  json_.repairs().NoteDrop(index_);
  return Step::kOk;
}

Step ChromeEventReader::ReadAgain(bool decode_fields) {
  const char* resume = json_.pos();
  json_.set_pos(event_.start);
  phase_hint_ = event_.phase;
  json_.repairs().set_mode(UnitRepairs::Mode::kQuiet);
  Step again = ParseEventObject(decode_fields);
  json_.repairs().set_mode(UnitRepairs::Mode::kRecord);
  PROFSH_TRY(again);
  json_.set_pos(resume);
  return Step::kOk;
}

// Everything but the holes is the template's, which was valid when it was recorded.
Step ChromeEventReader::CommitTemplated(EventShape& shape) {
  const std::string_view name = event_.has_name ? json_.View(event_.name) : std::string_view();
  event_.signature.InlineWords(&inline_words_);
  const int64_t dur = shape.phase == 'X' ? event_.dur : 0;
  if (shape.last_event_template != UINT32_MAX && shape.last_name == name) {
    builder_.AddEventWithTemplate(shape.last_event_template, shape.has_ts ? event_.ts : 0, dur,
                                  inline_words_);
    return Step::kOk;
  }
  EventFields e;
  e.phase = shape.phase;
  e.ts = shape.has_ts ? event_.ts : 0;
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

Step ChromeEventReader::Commit() {
  if (event_.shape != nullptr) return CommitTemplated(*event_.shape);
  // What Perfetto drops (json_tokenizer_failure, json_parser_failure) is dropped and counted.
  if (!event_.has_phase) [[unlikely]]
    return DropEvent(event_.saw_field ? Repair::kMissingPhase : Repair::kEmptyEvent);
  if (event_.phase != 'M') {
    if (event_.bad_ts || event_.bad_dur) [[unlikely]]
      return DropEvent(Repair::kBadTime);
    if (!event_.has_ts) [[unlikely]]
      return DropEvent(Repair::kMissingTs);
    if (event_.phase == 'X' && !event_.has_dur) [[unlikely]]
      return DropEvent(Repair::kCompleteWithoutDur);
  }
  if (!event_.has_pid) [[unlikely]] {
    NoteEventRepair(Repair::kMissingPid);
    event_.pid = Ident{};
  }
  if (!event_.has_tid) [[unlikely]] {
    // Perfetto's rule: the thread of an event without "tid" is tid = pid.
    NoteEventRepair(Repair::kMissingTid);
    event_.tid = event_.pid;
  }
  uint32_t schema = TraceBuilder::kNoArgs;
  if (!event_.signature.empty()) {
    if (made_decisions_ && (decided_with_phase_ == 'C') != (event_.phase == 'C')) {
      // "ph" came after the arguments and changes which numbers are inline: parse again.
      PROFSH_TRY(ReadAgain(/*decode_fields=*/false));
    }
    uint64_t hash = event_.signature.Hash();
    auto found = builder_.FindSchema(event_.signature, hash);
    if (found) {
      schema = *found;
    } else {
      // A signature not seen before: decode the fields once to build its schema.
      PROFSH_TRY(ReadAgain(/*decode_fields=*/true));
      builder_.BeginArgs();
      for (const RawField& f : fields_) {
        builder_.AddArg(json_.View(f.key), f.top_level, f.value, json_.View(f.text),
                        f.inline_value);
      }
      schema = builder_.BuildSchema();
      builder_.RememberSchema(event_.signature, hash, schema);
    }
    event_.signature.InlineWords(&inline_words_);
  } else {
    inline_words_.clear();
  }
  EventFields e;
  e.phase = event_.phase;
  e.ts = event_.has_ts ? event_.ts : 0;
  e.dur = event_.phase == 'X' ? event_.dur : 0;
  e.name = event_.has_name ? json_.View(event_.name) : std::string_view();
  e.category = event_.has_cat ? json_.View(event_.cat) : std::string_view();
  e.pid = event_.pid;
  e.tid = event_.tid;
  builder_.AddEvent(e, schema, inline_words_);

  EventShape shape;
  shape.phase = event_.phase;
  shape.category.assign(e.category);
  shape.pid = e.pid;
  shape.tid = e.tid;
  shape.has_ts = event_.has_ts;
  shape.has_dur = event_.has_dur;
  shape.schema = schema;
  // A repaired event is no template: the events that match it would skip the repair's count.
  if (!json_.repairs().has_repairs())
    templates_.Remember(event_.start, event_.end, event_.holes, std::move(shape));
  return Step::kOk;
}

}  // namespace profsh
