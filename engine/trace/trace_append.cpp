#include "engine/trace/trace_append.h"

#include <string>
#include <vector>

namespace profsh {

namespace {

// The destination's schema for each of `from`'s schemas, built on first use.
class SchemaMap {
 public:
  SchemaMap(const Trace& from, TraceBuilder& to)
      : from_(from), to_(to), mapped_(from.args.schema_count(), kUnmapped) {}

  uint32_t Map(uint32_t schema) {
    uint32_t& m = mapped_[schema];
    if (m != kUnmapped) return m;
    to_.BeginArgs();
    const size_t n = from_.args.field_count(schema);
    for (size_t i = 0; i < n; ++i) {
      const SchemaField f = from_.args.field(schema, i);
      ArgValue v = f.value;
      std::string_view text;
      if (f.inline_value) {
        // Only the type and width matter: the words themselves are copied per event.
        v.int_value = f.inline_words == 2 ? INT64_MIN : 0;
      } else if (v.type == ArgType::kString || v.type == ArgType::kJson) {
        text = from_.str(v.str);
      }
      to_.AddArg(from_.str(f.key), f.top_level, v, text, f.inline_value);
    }
    return m = to_.BuildSchema();
  }

 private:
  static constexpr uint32_t kUnmapped = UINT32_MAX;
  const Trace& from_;
  TraceBuilder& to_;
  std::vector<uint32_t> mapped_;
};

}  // namespace

size_t AppendEvents(const Trace& from, TraceBuilder& to, const PlaceEvent& place) {
  SchemaMap schemas(from, to);
  std::vector<uint32_t> words;
  std::string pid_text, tid_text;
  size_t appended = 0;
  for (size_t i = 0; i < from.events.size(); ++i) {
    const Track& track = from.tracks[from.events.track(i)];
    int64_t ts = from.events.ts(i);
    Ident pid = track.pid, tid = track.tid;
    bool pid_interned = false;
    if (!place(i, &ts, &pid, &tid, &pid_interned)) continue;
    EventFields e;
    e.phase = from.events.phase(i);
    e.ts = ts;
    e.dur = from.events.dur(i);
    e.name = from.str(from.events.name(i));
    e.category = from.category_name(from.events.category(i));
    e.flags = from.events.flags(i);
    // String idents are interned in the destination's pool.
    if (pid.is_string && !pid_interned) pid.str = to.InternString(from.str(pid.str));
    if (tid.is_string) tid.str = to.InternString(from.str(tid.str));
    e.pid = pid;
    e.tid = tid;
    const ArgRef args = from.events.args(i);
    uint32_t schema = TraceBuilder::kNoArgs;
    words.clear();
    if (!args.empty()) {
      schema = schemas.Map(args.schema());
      const uint32_t* schema_words =
          &from.args.schema_words()[from.args.schema_offsets()[args.schema()]];
      const uint32_t n = ArgStore::InlineWordCount(schema_words);
      words.assign(from.args.arena().begin() + args.offset,
                   from.args.arena().begin() + args.offset + n);
    }
    to.AddEvent(e, schema, words);
    ++appended;
  }
  return appended;
}

}  // namespace profsh
