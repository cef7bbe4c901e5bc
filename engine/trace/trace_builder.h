// Appends events to a Trace while interning everything that repeats. Importers (and, later, the
// collector's stream reader) feed it parsed fields; it owns the caches that make the per-event
// cost a handful of hash lookups: the argument-signature cache above all, which maps the exact
// shape of an args object (keys, types, non-volatile values) to its interned schema.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace& trace);

  void SetFormat(std::string format) { trace_.source_format = std::move(format); }
  void ReserveForBytes(size_t input_bytes);
  uint32_t InternString(std::string_view s) { return trace_.strings.Intern(s); }
  // A top-level JSON member other than traceEvents; `json` is its value's text.
  Status AddMetadata(std::string key, std::string_view json);

  // Arguments of the next event: BeginArgs(), AddArg()*, then AddEvent().
  // `text` is the decoded string for kString and the JSON text for kJson.
  void BeginArgs();
  void AddArg(std::string_view key, bool top_level, const ArgValue& value, std::string_view text,
              bool inline_value);
  Status AddEvent(const EventFields& e);

  // Matches B/E pairs into complete events, applies the time origin and builds derived tables.
  Status Finish();

 private:
  struct PendingArg {
    ArgValue value;
    bool inline_value;
    bool top_level;
    uint32_t key_offset, key_size;    // into text_
    uint32_t text_offset, text_size;  // into text_
  };
  uint32_t ResolveSchema();
  void MatchBeginEnd();

  Trace& trace_;
  std::vector<PendingArg> pending_;
  std::string text_;
  std::string signature_;
  std::string minify_buf_;
  std::vector<SchemaField> schema_scratch_;
  std::vector<uint32_t> inline_words_;

  // Argument signature -> schema id, open addressing over signatures stored in sig_bytes_.
  struct SigSlot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t size = 0;
    uint32_t schema = 0;
    bool used = false;
  };
  std::vector<SigSlot> sig_slots_;
  std::vector<char> sig_bytes_;
  size_t sig_count_ = 0;

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
