// The in-memory trace: columnar events with interned names, tracks and arguments.
//
// One event costs 32 bytes in the columns (ts, dur, name, track, args, kind) plus its inline
// argument words; everything that repeats (names, categories, argument schemas, shapes, stacks)
// is interned once. Timestamps are integer nanoseconds relative to `origin_ns` so that both
// Kineto conventions (absolute integer microseconds, and relative microseconds with a
// nanosecond fraction plus baseTimeNanoseconds) load without loss.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/trace/args.h"
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

class EventTable {
 public:
  size_t size() const { return ts_.size(); }
  int64_t ts(size_t i) const { return ts_[i]; }
  int64_t dur(size_t i) const { return dur_[i]; }
  int64_t end(size_t i) const { return ts_[i] + dur_[i]; }
  uint32_t name(size_t i) const { return name_[i]; }
  uint32_t track(size_t i) const { return track_[i]; }
  uint32_t args(size_t i) const { return args_[i]; }
  char phase(size_t i) const { return static_cast<char>(kind_[i] & 0xff); }
  uint8_t flags(size_t i) const { return static_cast<uint8_t>((kind_[i] >> 8) & 0xff); }
  uint16_t category(size_t i) const { return static_cast<uint16_t>(kind_[i] >> 16); }

  void Append(int64_t ts, int64_t dur, uint32_t name, uint32_t track, uint32_t args, char phase,
              uint16_t category, uint8_t flags = 0) {
    ts_.push_back(ts);
    dur_.push_back(dur);
    name_.push_back(name);
    track_.push_back(track);
    args_.push_back(args);
    kind_.push_back(PackKind(phase, category, flags));
  }
  void Reserve(size_t n);
  void SetDuration(size_t i, int64_t dur) { dur_[i] = dur; }
  void SetPhase(size_t i, char phase) { kind_[i] = PackKind(phase, category(i), flags(i)); }
  void AddFlags(size_t i, uint8_t f) { kind_[i] |= static_cast<uint32_t>(f) << 8; }
  size_t MemoryBytes() const;
  static constexpr size_t kBytesPerEvent =
      sizeof(int64_t) * 2 + sizeof(uint32_t) * 4;  // ts, dur, name, track, args, kind

  static uint32_t PackKind(char phase, uint16_t category, uint8_t flags) {
    return static_cast<uint8_t>(phase) | (static_cast<uint32_t>(flags) << 8) |
           (static_cast<uint32_t>(category) << 16);
  }

  // Raw columns, for the binary format and for bulk passes.
  LargeVector<int64_t>& ts_column() { return ts_; }
  LargeVector<int64_t>& dur_column() { return dur_; }
  LargeVector<uint32_t>& name_column() { return name_; }
  LargeVector<uint32_t>& track_column() { return track_; }
  LargeVector<uint32_t>& args_column() { return args_; }
  LargeVector<uint32_t>& kind_column() { return kind_; }
  const LargeVector<int64_t>& ts_column() const { return ts_; }
  const LargeVector<int64_t>& dur_column() const { return dur_; }
  const LargeVector<uint32_t>& name_column() const { return name_; }
  const LargeVector<uint32_t>& track_column() const { return track_; }
  const LargeVector<uint32_t>& args_column() const { return args_; }
  const LargeVector<uint32_t>& kind_column() const { return kind_; }

 private:
  LargeVector<int64_t> ts_;
  LargeVector<int64_t> dur_;
  LargeVector<uint32_t> name_;
  LargeVector<uint32_t> track_;
  LargeVector<uint32_t> args_;
  LargeVector<uint32_t> kind_;
};
static_assert(EventTable::kBytesPerEvent == 32, "an event must stay 32 bytes in the columns");

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

  std::string FormatIdent(const Ident& id) const {
    return id.is_string ? std::string(strings.Get(id.str)) : std::to_string(id.number);
  }
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
