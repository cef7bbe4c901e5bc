// Appends events to a Trace while interning everything that repeats. Importers (and, later, the
// collector's stream reader) feed it parsed fields; it owns the caches that keep the per-event
// cost to a few lookups: names, the last category and track, and above all the argument
// signature cache, which maps the exact bytes of an args object (its volatile numbers cut out)
// to an interned schema, so that an args object seen before is never decoded again.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/trace/import_repairs.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

struct EventFields {
  char phase = 'X';
  int64_t ts = 0;   // ns
  int64_t dur = 0;  // ns
  std::string_view name;
  std::string_view category;
  Ident pid;
  Ident tid;
  uint8_t flags = 0;
};

// What identifies an event's arguments as written: raw byte pieces (everything but the inline
// numbers) and the inline numbers themselves, whose types are part of the identity.
class ArgSignature {
 public:
  void Clear() {
    pieces_.clear();
    types_.clear();
    bits_.clear();
  }
  void AddPiece(const char* p, size_t n) {
    if (n > 0) pieces_.emplace_back(p, n);
  }
  void AddInline(const ArgValue& v) {
    uint64_t bits = static_cast<uint64_t>(v.int_value);
    if (v.type == ArgType::kDouble) std::memcpy(&bits, &v.double_value, sizeof(bits));
    uint8_t wide = ArgStore::InlineWords(v) == 2 ? 0x80 : 0;
    types_.push_back(static_cast<uint8_t>(v.type) | wide);
    bits_.push_back(bits);
  }
  // The same for an int that is known to fit one word.
  void AddInlineInt(int32_t v) {
    types_.push_back(static_cast<uint8_t>(ArgType::kInt));
    bits_.push_back(static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  bool empty() const { return pieces_.empty() && types_.empty(); }
  size_t piece_count() const { return pieces_.size(); }
  std::string_view piece(size_t i) const { return pieces_[i]; }
  uint8_t inline_type(size_t i) const { return types_[i]; }
  // Drops what was added after the signature had these sizes (a failed speculative match).
  void Truncate(size_t pieces, size_t inlines) {
    pieces_.resize(pieces);
    types_.resize(inlines);
    bits_.resize(inlines);
  }
  uint64_t Hash() const;
  // The per-event words of the inline values, in order.
  void InlineWords(std::vector<uint32_t>* out) const;
  size_t inline_count() const { return bits_.size(); }

 private:
  friend class TraceBuilder;
  std::vector<std::string_view> pieces_;
  std::vector<uint8_t> types_;  // ArgType, plus 0x80 when the value needs two words
  std::vector<uint64_t> bits_;
};

class TraceBuilder {
 public:
  static constexpr uint32_t kNoArgs = UINT32_MAX;

  explicit TraceBuilder(Trace& trace);

  void SetFormat(std::string format) { trace_.source_format = std::move(format); }
  void ReserveForBytes(size_t input_bytes);
  uint32_t InternString(std::string_view s) { return trace_.strings.Intern(s); }
  // A top-level JSON member other than traceEvents; `json` is its value's text.
  Status AddMetadata(std::string key, std::string_view json);

  // The schema for a signature seen before, if any.
  std::optional<uint32_t> FindSchema(const ArgSignature& signature, uint64_t hash) const;
  void RememberSchema(const ArgSignature& signature, uint64_t hash, uint32_t schema);

  // Builds a schema from decoded fields: BeginArgs(), AddArg()*, BuildSchema().
  // `text` is the decoded string for kString and the JSON text for kJson; inline fields carry
  // their value only for its type and width.
  void BeginArgs();
  void AddArg(std::string_view key, bool top_level, const ArgValue& value, std::string_view text,
              bool inline_value);
  uint32_t BuildSchema();

  // Typed forms of AddArg. Fixed values are part of the schema (every event that has it shares
  // them); an inline value is each event's own, passed to AddEvent as two words.
  enum class Place : bool { kArgs, kTopLevel };  // inside "args", or a member of the event
  void AddStringArg(std::string_view key, std::string_view text, Place place = Place::kArgs) {
    ArgValue v;
    v.type = ArgType::kString;
    AddArg(key, place == Place::kTopLevel, v, text, false);
  }
  // `json` is the value's JSON text (a list of shapes, say).
  void AddJsonArg(std::string_view key, std::string_view json) {
    ArgValue v;
    v.type = ArgType::kJson;
    AddArg(key, false, v, json, false);
  }
  void AddIntArg(std::string_view key, int64_t value) {
    ArgValue v;
    v.type = ArgType::kInt;
    v.int_value = value;
    AddArg(key, false, v, "", false);
  }
  void AddDoubleArg(std::string_view key, double value) {
    ArgValue v;
    v.type = ArgType::kDouble;
    v.double_value = value;
    AddArg(key, false, v, "", false);
  }
  // An int64 (kInt), uint64 (kUInt) or double (kDouble) that every event gives in two words.
  void AddInlineArg(std::string_view key, ArgType type, Place place = Place::kArgs) {
    ArgValue v;
    v.type = type;
    // Values that need two words whatever they are, so that every event's take the same room.
    v.int_value = type == ArgType::kUInt ? -1 : INT64_MIN;
    AddArg(key, place == Place::kTopLevel, v, "", true);
  }
  // An int that every event gives in one word (its value fits in an int32), as the JSON importer
  // keeps small ids.
  void AddInlineInt32Arg(std::string_view key, Place place = Place::kArgs) {
    ArgValue v;
    v.type = ArgType::kInt;
    AddArg(key, place == Place::kTopLevel, v, "", true);
  }

  // Appends an event; `schema` is kNoArgs for an event without arguments.
  void AddEvent(const EventFields& e, uint32_t schema, std::span<const uint32_t> inline_words) {
    AddEventWithTemplate(TemplateOf(e, schema), e.ts, e.dur, inline_words);
  }
  // The same in two steps, for importers that know which events share everything but their
  // times and inline argument words: TemplateOf interns the shared part (the id stays valid
  // for the trace's lifetime), AddEventWithTemplate appends an event that has it.
  uint32_t TemplateOf(const EventFields& e, uint32_t schema);
  void AddEventWithTemplate(uint32_t event_template, int64_t ts, int64_t dur,
                            std::span<const uint32_t> inline_words) {
    const uint32_t schema_plus_one = trace_.events.templates()[event_template].schema_plus_one;
    const ArgRef args =
        schema_plus_one == 0 ? ArgRef{} : trace_.args.Append(schema_plus_one - 1, inline_words);
    trace_.events.AppendWithTemplate(ts, dur < 0 ? 0 : dur, event_template, args.offset);
  }
  // The name of the events that have a template.
  std::string_view TemplateName(uint32_t event_template) const {
    return trace_.str(trace_.events.templates()[event_template].name);
  }

  // What the importer repaired or dropped; Finish() publishes it (with what B/E matching adds)
  // into the trace's import_stats and warnings.
  ImportRepairs& repairs() { return repairs_; }
  // An input event the importer dropped, by its index in the input, so that places given as
  // event indices later (B/E matching) name the input's events.
  void NoteDroppedEvent(uint64_t input_index) { dropped_inputs_.push_back(input_index); }

  // Matches B/E pairs into complete events and builds the derived tables.
  Status Finish();

 private:
  struct PendingArg {
    ArgValue value;
    bool inline_value;
    bool top_level;
    uint32_t key_offset, key_size;    // into text_
    uint32_t text_offset, text_size;  // into text_
  };
  uint32_t InternName(std::string_view name);
  void MatchBeginEnd();
  uint64_t InputIndex(uint64_t event) const;

  Trace& trace_;
  ImportRepairs repairs_;
  std::vector<uint64_t> dropped_inputs_;  // ascending
  std::vector<PendingArg> pending_;
  std::string text_;
  std::string minify_buf_;
  std::vector<SchemaField> schema_scratch_;

  // Signature -> schema, open addressing; signatures are stored flattened in sig_bytes_ as
  // [piece count, (length, bytes)*, inline count, types].
  struct SigSlot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t size = 0;
    uint32_t schema = 0;
    bool used = false;
  };
  bool SignatureEquals(const SigSlot& slot, const ArgSignature& s) const;
  std::vector<SigSlot> sig_slots_;
  std::vector<char> sig_bytes_;
  size_t sig_count_ = 0;

  // Direct-mapped cache of recent names (most names repeat; hashing long kernel names is the
  // expensive part of interning them).
  struct NameSlot {
    uint32_t id = 0;
    uint32_t size = UINT32_MAX;
  };
  static constexpr size_t kNameCacheSize = 4096;  // a power of two
  std::vector<NameSlot> name_cache_;
  size_t name_cache_size_ = kNameCacheSize;

  // One-entry caches for the fields that repeat from one event to the next.
  std::string last_category_;
  uint16_t last_category_index_ = 0;
  bool has_last_category_ = false;
  Ident last_pid_, last_tid_;
  uint32_t last_track_ = 0;
  bool has_last_track_ = false;
  bool has_begin_end_ = false;
};

}  // namespace profsh
