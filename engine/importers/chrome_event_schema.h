// The Chrome Trace Event schema: one event object of traceEvents, read from the tokenizer into
// the Trace. It knows what the fields mean ("ph", "ts" and "dur" in microseconds, "pid", "tid",
// "name", "cat", "args", flow and metadata fields), which argument numbers vary per event and are
// stored inline (IsVolatileKey), and what Perfetto and catapult accept beyond the format (numbers
// and ids written as strings, events without "ph", "ts", "pid", "tid"), each repair counted.
//
// An event that matches a template of an earlier one (event_template_match.h) costs a few memcmp
// calls; any other is read field by field and recorded as a new template.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/importers/event_templates.h"
#include "engine/importers/json_tokenizer.h"
#include "engine/trace/trace_builder.h"

namespace profsh {

// Whether a numeric field of this key varies per event, so that it is stored inline rather than
// in the interned argument schema (see args.h). top_level: an event field, not one of "args".
bool IsVolatileKey(std::string_view key, bool top_level);

// A JSON number as an argument value.
ArgValue NumberArg(const json::Number& n);

// The event being read: its fixed fields, and what the template store needs to remember it.
struct ChromeEvent {
  const char* start = nullptr;  // its '{'
  const char* end = nullptr;    // after its '}'
  char phase = 0;
  bool has_phase = false, has_ts = false, has_dur = false, has_name = false, has_cat = false;
  bool has_pid = false, has_tid = false;
  bool bad_ts = false, bad_dur = false;  // a "ts"/"dur" that is no number
  bool saw_field = false;                // the event object was not empty
  int64_t ts = 0, dur = 0;               // nanoseconds
  Text name, cat;
  Ident pid, tid;
  // The arguments' signature: raw bytes, with the inline numbers cut out.
  ArgSignature signature;
  std::vector<RecordedHole> holes;
  EventShape* shape = nullptr;  // the template the event matched, if it did
};

class ChromeEventReader {
 public:
  ChromeEventReader(JsonTokenizer& json, TraceBuilder& builder) : json_(json), builder_(builder) {}

  // Reads the event object at the cursor (its '{'), traceEvents[index]; the cursor ends after it.
  Step Read(uint64_t index);
  // Adds the event read last to the trace, or drops it (counted) when it lacks what Perfetto
  // requires. Called once the event's separator has been seen.
  Step Commit();

 private:
  // One field of the event (an extra event-level one, or one of "args"), decoded to build the
  // schema of a signature not seen before.
  struct RawField {
    Text key;
    bool top_level = false;
    bool inline_value = false;
    ArgValue value;
    Text text;  // kString (decoded) or kJson (raw span)
  };

  // With decode_fields false (the fast path) arguments are only validated and their signature
  // recorded; with true, every field is also decoded into fields_.
  Step ParseEventObject(bool decode_fields);
  // The event read again from its start, in the phase learnt the first time, without counting
  // its repairs twice.
  Step ReadAgain(bool decode_fields);
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
  Step CommitTemplated(EventShape& shape);
  // Drops the event being committed, counting why.
  Step DropEvent(Repair why);
  bool NoteEventRepair(Repair kind) {
    return json_.repairs().Note(kind, ImportRepairs::Place::kEvent, index_);
  }
  Step FailEvent(const char* at, std::string message);

  JsonTokenizer& json_;
  TraceBuilder& builder_;
  uint64_t index_ = 0;
  ChromeEvent event_;
  std::vector<RawField> fields_;
  std::vector<uint32_t> inline_words_;
  const char* piece_start_ = nullptr;
  char phase_hint_ = 0;          // phase learnt in a first pass, for a second one
  char decided_with_phase_ = 0;  // phase that inline decisions of this event were made with
  bool made_decisions_ = false;
  EventTemplates templates_;
};

}  // namespace profsh
