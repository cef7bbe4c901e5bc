// The in-memory trace: columnar events with interned names, tracks and arguments.
//
// One event costs 20 bytes in the columns (ts, dur, template, argument offset) plus its inline
// argument words; everything that repeats (names, tracks, categories, argument schemas, shapes,
// stacks, and their combinations as event templates) is interned once. Timestamps are integer
// nanoseconds relative to `origin_ns` so that both Kineto conventions (absolute integer
// microseconds, and relative microseconds with a nanosecond fraction plus baseTimeNanoseconds) load
// without loss.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/trace/args.h"
#include "engine/trace/derived_cache.h"
#include "engine/util/large_vector.h"
#include "engine/util/string_pool.h"

namespace profsh {

// A pid or tid: Chrome traces allow numbers ("pid": 1234) and strings ("pid": "Spans").
struct Ident {
  int64_t number = 0;
  uint32_t str = 0;  // string pool id when is_string
  bool is_string = false;

  bool operator==(const Ident& o) const {
    return is_string == o.is_string && (is_string ? str == o.str : number == o.number);
  }
};

struct Track {
  Ident pid;
  Ident tid;
};

enum EventFlags : uint8_t {
  // A range whose end was never seen (a B without E, or a range open when the workload died).
  kFlagUnterminated = 1 << 0,
};

struct ProcessInfo {
  Ident pid;
  uint32_t name = 0;  // string id, 0 when unnamed
  uint32_t labels = 0;
  int64_t sort_index = 0;
  bool has_sort_index = false;
  std::vector<uint32_t> tracks;  // tracks of this process, in first-seen order
};

struct ThreadInfo {
  uint32_t name = 0;
  int64_t sort_index = 0;
  bool has_sort_index = false;
};

// What events share: name, track, kind (phase, flags, category) and argument schema. A trace
// has a few hundred distinct combinations for millions of events, so each event keeps only the
// index of its template.
struct EventTemplate {
  uint32_t name = 0;
  uint32_t track = 0;
  uint32_t kind = 0;             // EventTable::PackKind
  uint32_t schema_plus_one = 0;  // 0: the event has no arguments

  bool operator==(const EventTemplate&) const = default;
};

// A duration too long for the 32-bit column.
struct LongDuration {
  uint64_t event = 0;
  int64_t ns = 0;
};

class EventTable {
 public:
  size_t size() const { return ts_.size(); }
  int64_t ts(size_t i) const { return ts_[i]; }
  int64_t dur(size_t i) const {
    uint32_t d = dur_[i];
    return d != kLongDuration ? d : FindLongDuration(i);
  }
  int64_t end(size_t i) const { return ts(i) + dur(i); }
  const EventTemplate& event_template(size_t i) const { return templates_[template_[i]]; }
  uint32_t name(size_t i) const { return event_template(i).name; }
  uint32_t track(size_t i) const { return event_template(i).track; }
  ArgRef args(size_t i) const { return ArgRef{event_template(i).schema_plus_one, args_[i]}; }
  char phase(size_t i) const { return PhaseOf(event_template(i).kind); }
  uint8_t flags(size_t i) const { return FlagsOf(event_template(i).kind); }
  uint16_t category(size_t i) const { return CategoryOf(event_template(i).kind); }

  // `args` is what ArgStore::Append returned (0 for an event without arguments).
  void Append(int64_t ts, int64_t dur, uint32_t name, uint32_t track, ArgRef args, char phase,
              uint16_t category, uint8_t flags = 0) {
    AppendWithTemplate(ts, dur,
                       InternTemplate(EventTemplate{name, track, PackKind(phase, category, flags),
                                                    args.schema_plus_one}),
                       args.offset);
  }
  // `event_template` is what InternTemplate returned.
  void AppendWithTemplate(int64_t ts, int64_t dur, uint32_t event_template, uint32_t args_offset) {
    ++generation_;
    if (dur < 0 || dur >= kLongDuration) {
      long_durations_.push_back(LongDuration{ts_.size(), dur});
      dur_.push_back(kLongDuration);
    } else {
      dur_.push_back(static_cast<uint32_t>(dur));
    }
    ts_.push_back(ts);
    template_.push_back(event_template);
    args_.push_back(args_offset);
  }
  uint32_t InternTemplate(const EventTemplate& t) {
    if (!templates_.empty() && templates_[last_template_] == t) return last_template_;
    // A small direct-mapped cache in front of the table: the events of a trace cycle through a
    // few dozen templates, and the table's slots are a cache miss away.
    RecentTemplate& recent = recent_[RecentSlot(t)];
    if (recent.id != UINT32_MAX && recent.t == t) return last_template_ = recent.id;
    last_template_ = InternTemplateSlow(t);
    recent = RecentTemplate{t, last_template_};
    return last_template_;
  }
  void Reserve(size_t n);
  // Returns the pages of reserved, unused capacity (once the table is complete).
  void ReleaseUnusedCapacity();
  // Sets the durations of the events named (each at most once); long ones are sorted in once,
  // not inserted one by one.
  void SetDurations(const std::vector<LongDuration>& durations);
  void SetPhase(size_t i, char phase);
  // Moves an event in time (ranks of a job aligned after loading).
  void ShiftTs(size_t i, int64_t delta_ns) {
    ts_[i] += delta_ns;
    ++generation_;
  }
  void AddFlags(size_t i, uint8_t f);
  // Removes the events marked in `drop`, keeping the order of the rest.
  void Compact(const std::vector<bool>& drop);
  // The memory the table holds once complete (ReleaseUnusedCapacity): its columns' used pages,
  // not the capacity reserved for them (large_vector.h's HeldBytes).
  size_t MemoryBytes() const;
  // Counts the changes to the events (every append, move, edit, removal): what is derived from
  // them (Trace::derived) is rebuilt when it changed.
  uint64_t generation() const { return generation_; }
  static constexpr size_t kBytesPerEvent =
      sizeof(int64_t) + sizeof(uint32_t) * 3;  // ts, dur, template, inline-argument offset

  static uint32_t PackKind(char phase, uint16_t category, uint8_t flags) {
    return static_cast<uint8_t>(phase) | (static_cast<uint32_t>(flags) << 8) |
           (static_cast<uint32_t>(category) << 16);
  }
  static char PhaseOf(uint32_t kind) { return static_cast<char>(kind & 0xff); }
  static uint8_t FlagsOf(uint32_t kind) { return static_cast<uint8_t>((kind >> 8) & 0xff); }
  static uint16_t CategoryOf(uint32_t kind) { return static_cast<uint16_t>(kind >> 16); }

  // Durations of 2^32 - 1 ns (4.3 s) and more are kept aside, by event index.
  static constexpr uint32_t kLongDuration = UINT32_MAX;

  // Raw tables, for the binary format.
  const LargeVector<int64_t>& ts_column() const { return ts_; }
  const LargeVector<uint32_t>& dur_column() const { return dur_; }
  const LargeVector<uint32_t>& template_column() const { return template_; }
  const LargeVector<uint32_t>& args_column() const { return args_; }
  const std::vector<EventTemplate>& templates() const { return templates_; }
  const std::vector<LongDuration>& long_durations() const { return long_durations_; }
  // Replaces the contents with deserialized tables; the caller has validated them.
  void Assign(LargeVector<int64_t> ts, LargeVector<uint32_t> dur, LargeVector<uint32_t> templ,
              LargeVector<uint32_t> args, std::vector<EventTemplate> templates,
              std::vector<LongDuration> long_durations);

 private:
  static size_t RecentSlot(const EventTemplate& t) {
    uint64_t h = (static_cast<uint64_t>(t.name) * 0x9E3779B97F4A7C15ULL) ^
                 (static_cast<uint64_t>(t.track ^ t.kind ^ (t.schema_plus_one << 7)) << 17);
    return (h >> 54) & (kRecentTemplates - 1);
  }
  uint32_t InternTemplateSlow(const EventTemplate& t);
  void RehashTemplates();
  int64_t FindLongDuration(size_t i) const;

  LargeVector<int64_t> ts_;
  LargeVector<uint32_t> dur_;
  LargeVector<uint32_t> template_;
  LargeVector<uint32_t> args_;
  std::vector<EventTemplate> templates_;
  std::vector<uint32_t> template_slots_;  // open addressing: template index + 1
  struct RecentTemplate {
    EventTemplate t;
    uint32_t id = UINT32_MAX;
  };
  static constexpr size_t kRecentTemplates = 1024;
  std::vector<RecentTemplate> recent_ = std::vector<RecentTemplate>(kRecentTemplates);
  uint32_t last_template_ = 0;
  // Sorted by event.
  std::vector<LongDuration> long_durations_;
  uint64_t generation_ = 0;
};
static_assert(EventTable::kBytesPerEvent == 20, "an event must stay 20 bytes in the columns");
static_assert(sizeof(EventTemplate) == 16);

// The "profsh" metadata member that marks memory attributed by thread (see Trace).
inline constexpr char kMemoryByThreadMember[] = "\"memory_attribution\": \"thread\"";

class Trace {
 public:
  Trace() = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  StringPool strings;
  ArgStore args;
  EventTable events;
  std::vector<uint32_t> categories{0};  // category index -> string id; index 0 = no category
  std::vector<Track> tracks;
  // Top-level JSON members other than traceEvents, in file order: key -> compact JSON text.
  std::vector<std::pair<std::string, std::string>> metadata;
  int64_t origin_ns = 0;    // absolute time (ns since the epoch when known) of ts == 0
  bool has_origin = false;  // the source gave baseTimeNanoseconds
  std::string source_path;
  std::string source_format;  // "kineto-json", "chrome-json-array", "profsh"
  std::vector<std::string> warnings;
  // What an importer repaired or dropped, one entry per kind: `name` is Perfetto's stats name
  // where one exists (e.g. "json_parser_failure"), `first_place` says where the kind first
  // occurred ("byte 1234", "event 17"). Each entry also has a line in `warnings`; SQL's `stats`
  // table reads these.
  struct ImportStat {
    std::string name;
    int64_t count = 0;
    std::string first_place;
    std::string description;
    bool data_lost = false;  // events or parts of the file were dropped, not repaired
  };
  std::vector<ImportStat> import_stats;
  // A window of a scheduled recording: the steps it holds (torch's step numbers).
  bool has_steps = false;
  int64_t first_step = 0, last_step = 0;

  std::string_view str(uint32_t id) const { return strings.Get(id); }
  std::string_view category_name(uint16_t index) const { return strings.Get(categories[index]); }
  const std::string* FindMetadata(std::string_view key) const;
  // Memory that profsh's collector recorded belongs to the innermost open range of the thread
  // that allocated it; torch's [memory] records are matched to operators by time alone, as
  // torch does. Saved in the "profsh" metadata member (kMemoryByThreadMember).
  bool memory_by_thread = false;
  // Sets the fields a saved profsh trace keeps in its "profsh" metadata member (steps, memory
  // attribution); called once when a trace is loaded.
  void ReadProfshMetadata();

  // Interns helpers for builders.
  uint16_t InternCategory(std::string_view name);
  uint32_t InternTrack(const Ident& pid, const Ident& tid);

  // Derived tables, rebuilt by RebuildDerived() after loading or building.
  const std::vector<ProcessInfo>& processes() const { return processes_; }
  const ThreadInfo& thread(uint32_t track) const { return threads_[track]; }
  // First and last instants covered by events (ns, relative to origin); 0/0 when empty.
  int64_t begin_ns() const { return begin_ns_; }
  int64_t end_ns() const { return end_ns_; }
  void RebuildDerived();
  // What the analyses derive from the events (their event model), built when first asked for;
  // rebuilt once the events change, dropped by RebuildDerived.
  mutable DerivedCache derived;

  std::string FormatIdent(const Ident& id) const {
    return id.is_string ? std::string(strings.Get(id.str)) : std::to_string(id.number);
  }
  // What the trace holds in memory once built (strings, arguments, events, tracks), as the
  // process's resident growth shows it: reserved capacity never used is not counted.
  size_t MemoryBytes() const;

 private:
  struct TrackKeyHash {
    size_t operator()(const std::pair<Ident, Ident>& k) const;
  };
  struct TrackKeyEq {
    bool operator()(const std::pair<Ident, Ident>& a, const std::pair<Ident, Ident>& b) const {
      return a.first == b.first && a.second == b.second;
    }
  };
  std::unordered_map<std::pair<Ident, Ident>, uint32_t, TrackKeyHash, TrackKeyEq> track_index_;
  std::unordered_map<uint32_t, uint16_t> category_index_;
  std::vector<ProcessInfo> processes_;
  std::vector<ThreadInfo> threads_;
  int64_t begin_ns_ = 0;
  int64_t end_ns_ = 0;
};

}  // namespace profsh
