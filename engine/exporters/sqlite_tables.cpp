// The trace's tables in SQLite. Perfetto's names and columns where Perfetto has the table (its
// JSON importer is the model: complete and instant events are slices, 'C' events counters on a
// track per process, name and argument key, 's'/'f' pairs flows bound to the slice they sit in),
// profsh's own where it does not. Times are nanoseconds, absolute when the trace says when it
// began.
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/event_kind.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/exporters/sqlite_handle.h"

namespace profsh::sqlite {

namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE process (upid INTEGER PRIMARY KEY, pid INTEGER, name TEXT);
CREATE TABLE thread (utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT, upid INTEGER);
CREATE TABLE thread_track (id INTEGER PRIMARY KEY, name TEXT, utid INTEGER);
CREATE TABLE slice (id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER,
  category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, kind TEXT);
CREATE TABLE args (arg_set_id INTEGER, flat_key TEXT, key TEXT, int_value INTEGER,
  string_value TEXT, real_value REAL, value_type TEXT);
CREATE TABLE flow (id INTEGER PRIMARY KEY, slice_out INTEGER, slice_in INTEGER, category TEXT,
  name TEXT);
CREATE TABLE counter_track (id INTEGER PRIMARY KEY, name TEXT, upid INTEGER);
CREATE TABLE counter (id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER, value REAL);
CREATE TABLE metadata (id INTEGER PRIMARY KEY, name TEXT, int_value INTEGER, str_value TEXT);
CREATE TABLE kernel (slice_id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, name TEXT,
  kind TEXT, device INTEGER, stream INTEGER, correlation INTEGER, launch_slice_id INTEGER,
  op_slice_id INTEGER, grid TEXT, block TEXT, registers_per_thread INTEGER,
  shared_memory INTEGER, track_id INTEGER);
CREATE TABLE memory (slice_id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER,
  device_type INTEGER, device_id INTEGER, addr INTEGER, bytes INTEGER, total_allocated INTEGER,
  total_reserved INTEGER);
CREATE TABLE op (name TEXT, count INTEGER, cpu_time_total_ns INTEGER,
  self_cpu_time_total_ns INTEGER, cuda_time_total_ns INTEGER, self_cuda_time_total_ns INTEGER,
  cpu_memory_usage INTEGER, self_cpu_memory_usage INTEGER, cuda_memory_usage INTEGER,
  self_cuda_memory_usage INTEGER, flops INTEGER, device TEXT, kind TEXT);
)sql";

// Made after the rows are in: one sort per index instead of a B-tree insert per row.
constexpr char kIndexes[] = R"sql(
CREATE INDEX slice_ts ON slice (ts);
CREATE INDEX slice_track ON slice (track_id, ts);
CREATE INDEX slice_name ON slice (name);
CREATE INDEX args_set ON args (arg_set_id);
CREATE INDEX flow_out ON flow (slice_out);
CREATE INDEX flow_in ON flow (slice_in);
CREATE INDEX counter_track_ts ON counter (track_id, ts);
CREATE INDEX kernel_ts ON kernel (ts);
CREATE INDEX kernel_correlation ON kernel (correlation);
)sql";

constexpr int64_t kNoSlice = -1;

bool IsSlice(char phase) {
  return phase == 'X' || phase == 'i' || phase == 'I';
}

// Slice ids (trace order of the slices) and their nesting per track: depth and parent, found by
// walking each track's slices by start, longer first, with a stack of the ranges still open.
struct Slices {
  std::vector<uint64_t> event;      // slice id -> event index
  std::vector<int64_t> id_of;       // event index -> slice id, kNoSlice for other events
  std::vector<uint32_t> by_track;   // slice ids sorted by (track, ts, longer first, id)
  std::vector<size_t> track_begin;  // per track: its first position in by_track (+ end)
  std::vector<int32_t> depth;       // per slice
  std::vector<int64_t> parent;      // per slice, kNoSlice at depth 0

  explicit Slices(const Trace& t) {
    const EventTable& ev = t.events;
    id_of.assign(ev.size(), kNoSlice);
    for (size_t i = 0; i < ev.size(); ++i) {
      if (!IsSlice(ev.phase(i))) continue;
      id_of[i] = static_cast<int64_t>(event.size());
      event.push_back(i);
    }
    by_track.resize(event.size());
    for (uint32_t s = 0; s < by_track.size(); ++s) by_track[s] = s;
    std::sort(by_track.begin(), by_track.end(), [&](uint32_t a, uint32_t b) {
      const uint64_t ea = event[a], eb = event[b];
      const uint32_t ta = ev.track(ea), tb = ev.track(eb);
      if (ta != tb) return ta < tb;
      if (ev.ts(ea) != ev.ts(eb)) return ev.ts(ea) < ev.ts(eb);
      if (ev.dur(ea) != ev.dur(eb)) return ev.dur(ea) > ev.dur(eb);
      return a < b;
    });
    track_begin.assign(t.tracks.size() + 1, by_track.size());
    depth.assign(event.size(), 0);
    parent.assign(event.size(), kNoSlice);
    std::vector<uint32_t> open;
    uint32_t track = UINT32_MAX;
    for (size_t k = by_track.size(); k-- > 0;) track_begin[ev.track(event[by_track[k]])] = k;
    for (size_t tr = t.tracks.size(); tr-- > 0;)
      track_begin[tr] = std::min(track_begin[tr], track_begin[tr + 1]);
    for (uint32_t s : by_track) {
      const uint64_t e = event[s];
      if (ev.track(e) != track) {
        track = ev.track(e);
        open.clear();
      }
      // A range that ends where this one starts is closed; an instant at a range's start is in it.
      while (!open.empty() && ev.end(event[open.back()]) <= ev.ts(e) &&
             !(ev.ts(event[open.back()]) == ev.ts(e)))
        open.pop_back();
      depth[s] = static_cast<int32_t>(open.size());
      parent[s] = open.empty() ? kNoSlice : open.back();
      open.push_back(s);
    }
  }

  // The slice a flow point at `ts` on `track` belongs to: one starting there (the innermost), or
  // else the innermost one open then; kNoSlice when none.
  int64_t At(const EventTable& ev, uint32_t track, int64_t ts) const {
    if (track + 1 >= track_begin.size()) return kNoSlice;
    auto first = by_track.begin() + static_cast<ptrdiff_t>(track_begin[track]);
    auto last = by_track.begin() + static_cast<ptrdiff_t>(track_begin[track + 1]);
    auto after = std::upper_bound(first, last, ts,
                                  [&](int64_t v, uint32_t s) { return v < ev.ts(event[s]); });
    if (after == first) return kNoSlice;
    int64_t s = *(after - 1);
    while (s != kNoSlice && ev.ts(event[s]) != ts && ev.end(event[s]) <= ts) s = parent[s];
    return s;
  }
};

const char* ValueType(ArgType type) {
  switch (type) {
    case ArgType::kNull:
      return "null";
    case ArgType::kBool:
      return "bool";
    case ArgType::kInt:
      return "int";
    case ArgType::kUInt:
      return "uint";
    case ArgType::kDouble:
      return "real";
    case ArgType::kString:
      return "string";
    case ArgType::kJson:
      return "json";
  }
  return "null";
}

// Binds a value to the int/string/real columns starting at `column`.
void BindValue(const Trace& t, const ArgValue& v, Inserter& row, int column) {
  row.Null(column);
  row.Null(column + 1);
  row.Null(column + 2);
  switch (v.type) {
    case ArgType::kNull:
      break;
    case ArgType::kBool:
      row.Int(column, v.bool_value ? 1 : 0);
      break;
    case ArgType::kInt:
    case ArgType::kUInt:
      row.Int(column, v.int_value);
      break;
    case ArgType::kDouble:
      row.Real(column + 2, v.double_value);
      break;
    case ArgType::kString:
    case ArgType::kJson:
      row.Text(column + 1, t.str(v.str));
      break;
  }
}

Status WriteThreads(const Trace& t, const Database& db) {
  Inserter process(db, "INSERT INTO process VALUES (?, ?, ?)");
  Inserter thread(db, "INSERT INTO thread VALUES (?, ?, ?, ?)");
  Inserter track(db, "INSERT INTO thread_track VALUES (?, ?, ?)");
  std::vector<std::string> names;  // kept alive for the statements
  names.reserve(t.processes().size() + t.tracks.size());
  std::unordered_map<uint32_t, int64_t> upid_of_track;
  for (size_t p = 0; p < t.processes().size(); ++p) {
    const ProcessInfo& info = t.processes()[p];
    process.Int(1, static_cast<int64_t>(p));
    process.OptionalInt(2, !info.pid.is_string, info.pid.number);
    if (info.name != 0) {
      process.Text(3, t.str(info.name));
    } else if (info.pid.is_string) {
      process.Text(3, t.str(info.pid.str));
    } else {
      process.Null(3);
    }
    process.Insert();
    for (uint32_t tr : info.tracks) upid_of_track[tr] = static_cast<int64_t>(p);
  }
  for (uint32_t tr = 0; tr < t.tracks.size(); ++tr) {
    const Track& info = t.tracks[tr];
    const uint32_t name = t.thread(tr).name;
    std::string_view text = name != 0            ? t.str(name)
                            : info.tid.is_string ? t.str(info.tid.str)
                                                 : std::string_view();
    thread.Int(1, tr);
    thread.OptionalInt(2, !info.tid.is_string, info.tid.number);
    if (text.empty()) {
      thread.Null(3);
    } else {
      thread.Text(3, text);
    }
    auto upid = upid_of_track.find(tr);
    thread.OptionalInt(4, upid != upid_of_track.end(),
                       upid != upid_of_track.end() ? upid->second : 0);
    thread.Insert();
    track.Int(1, tr);
    if (text.empty()) {
      track.Null(2);
    } else {
      track.Text(2, text);
    }
    track.Int(3, tr);
    track.Insert();
  }
  if (Status s = process.status(); !s.ok()) return s;
  if (Status s = thread.status(); !s.ok()) return s;
  return track.status();
}

Status WriteSlicesAndArgs(const Trace& t, const Slices& slices, const Database& db) {
  const EventTable& ev = t.events;
  Inserter slice(db, "INSERT INTO slice VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  Inserter args(db, "INSERT INTO args VALUES (?, ?, ?, ?, ?, ?, ?)");
  // Perfetto's JSON importer keeps an event's "args" members as "args.KEY"; event-level fields
  // other than the usual ones keep their own name.
  std::unordered_map<uint64_t, std::string> keys;
  std::vector<const char*> kinds(t.categories.size());
  for (size_t c = 0; c < kinds.size(); ++c)
    kinds[c] = EventKindName(KindOfCategory(t.category_name(static_cast<uint16_t>(c))));
  for (size_t s = 0; s < slices.event.size(); ++s) {
    const uint64_t e = slices.event[s];
    const uint16_t category = ev.category(e);
    const ArgRef ref = ev.args(e);
    slice.Int(1, static_cast<int64_t>(s));
    slice.Int(2, t.origin_ns + ev.ts(e));
    slice.Int(3, ev.phase(e) == 'X' ? ev.dur(e) : 0);
    slice.Int(4, ev.track(e));
    if (category == 0) {
      slice.Null(5);
    } else {
      slice.Text(5, t.category_name(category));
    }
    slice.Text(6, t.str(ev.name(e)));
    slice.Int(7, slices.depth[s]);
    slice.OptionalInt(8, slices.parent[s] != kNoSlice, slices.parent[s]);
    slice.OptionalInt(9, !ref.empty(), static_cast<int64_t>(s));
    slice.Text(10, kinds[category]);
    slice.Insert();
    if (ref.empty()) continue;
    for (const ArgStore::View::Item item : ArgStore::View(&t.args, ref)) {
      const uint64_t key_id = (static_cast<uint64_t>(item.key) << 1) | (item.top_level ? 1 : 0);
      auto key = keys.find(key_id);
      if (key == keys.end()) {
        key = keys.emplace(key_id, (item.top_level ? "" : "args.") + std::string(t.str(item.key)))
                  .first;
      }
      args.Int(1, static_cast<int64_t>(s));
      args.Text(2, key->second);
      args.Text(3, key->second);
      BindValue(t, item.value, args, 4);
      args.Text(7, ValueType(item.value.type));
      args.Insert();
    }
  }
  if (Status st = slice.status(); !st.ok()) return st;
  return args.status();
}

// 's' and 'f' events with the same category and id make one flow, from the slice the 's' sits in
// to the one the 'f' binds to (Kineto's ac2g: runtime call -> kernel; fwdbwd: forward ->
// backward operator).
Status WriteFlows(const Trace& t, const Slices& slices, const Database& db) {
  const EventTable& ev = t.events;
  const std::optional<uint32_t> id_key = t.strings.Find("id");
  if (!id_key) return Status::Ok();
  auto flow_id = [&](size_t e, int64_t* id) {
    ArgValue v;
    if (!ArgStore::View(&t.args, ev.args(e)).Find(*id_key, &v, true) || !v.is_number())
      return false;
    *id = v.AsInt();
    return true;
  };
  struct Key {
    uint16_t category;
    int64_t id;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<int64_t>()(k.id) ^ (static_cast<size_t>(k.category) << 48);
    }
  };
  std::unordered_map<Key, int64_t, KeyHash> starts;
  for (size_t e = 0; e < ev.size(); ++e) {
    int64_t id;
    if (ev.phase(e) != 's' || !flow_id(e, &id)) continue;
    starts[Key{ev.category(e), id}] = slices.At(ev, ev.track(e), ev.ts(e));
  }
  Inserter flow(db, "INSERT INTO flow (slice_out, slice_in, category, name) VALUES (?, ?, ?, ?)");
  for (size_t e = 0; e < ev.size(); ++e) {
    int64_t id;
    if (ev.phase(e) != 'f' || !flow_id(e, &id)) continue;
    auto start = starts.find(Key{ev.category(e), id});
    if (start == starts.end() || start->second == kNoSlice) continue;
    const int64_t end = slices.At(ev, ev.track(e), ev.ts(e));
    if (end == kNoSlice) continue;
    flow.Int(1, start->second);
    flow.Int(2, end);
    if (ev.category(e) == 0) {
      flow.Null(3);
    } else {
      flow.Text(3, t.category_name(ev.category(e)));
    }
    flow.Text(4, t.str(ev.name(e)));
    flow.Insert();
  }
  return flow.status();
}

// Device work, with the runtime call that launched it (same correlation id) and the slice that
// call ran in (the operator, usually).
Status WriteKernels(const Trace& t, const Slices& slices, const Database& db) {
  const EventTable& ev = t.events;
  enum { kDevice, kStream, kCorrelation, kGrid, kBlock, kRegisters, kSharedMemory };
  ArgReader reader(t, {"device", "stream", "correlation", "grid", "block", "registers per thread",
                       "shared memory"});
  std::vector<EventKind> kind(t.categories.size());
  for (size_t c = 0; c < kind.size(); ++c)
    kind[c] = KindOfCategory(t.category_name(static_cast<uint16_t>(c)));
  std::unordered_map<int64_t, int64_t> launch_of;
  for (size_t s = 0; s < slices.event.size(); ++s) {
    const uint64_t e = slices.event[s];
    int64_t correlation;
    if (kind[ev.category(e)] == EventKind::kRuntime &&
        reader.GetInt(ev.args(e), kCorrelation, &correlation))
      launch_of.emplace(correlation, static_cast<int64_t>(s));
  }
  Inserter row(db, "INSERT INTO kernel VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t s = 0; s < slices.event.size(); ++s) {
    const uint64_t e = slices.event[s];
    const EventKind k = kind[ev.category(e)];
    if (ev.phase(e) != 'X' ||
        (k != EventKind::kKernel && k != EventKind::kCopy && k != EventKind::kSet))
      continue;
    const ArgRef ref = ev.args(e);
    auto optional_int = [&](int column, size_t key) {
      int64_t v = 0;
      const bool present = reader.GetInt(ref, key, &v);
      row.OptionalInt(column, present, v);
      return present ? v : -1;
    };
    auto optional_text = [&](int column, size_t key) {
      ArgValue v;
      if (reader.Get(ref, key, &v) && (v.type == ArgType::kJson || v.type == ArgType::kString)) {
        row.Text(column, t.str(v.str));
      } else {
        row.Null(column);
      }
    };
    row.Int(1, static_cast<int64_t>(s));
    row.Int(2, t.origin_ns + ev.ts(e));
    row.Int(3, ev.dur(e));
    row.Text(4, t.str(ev.name(e)));
    row.Text(5, EventKindName(k));
    optional_int(6, kDevice);
    optional_int(7, kStream);
    int64_t correlation = 0;
    const bool has_correlation = reader.GetInt(ref, kCorrelation, &correlation);
    row.OptionalInt(8, has_correlation, correlation);
    auto launch = has_correlation ? launch_of.find(correlation) : launch_of.end();
    const int64_t launch_slice = launch != launch_of.end() ? launch->second : kNoSlice;
    row.OptionalInt(9, launch_slice != kNoSlice, launch_slice);
    const int64_t op = launch_slice != kNoSlice ? slices.parent[launch_slice] : kNoSlice;
    row.OptionalInt(10, op != kNoSlice, op);
    optional_text(11, kGrid);
    optional_text(12, kBlock);
    optional_int(13, kRegisters);
    optional_int(14, kSharedMemory);
    row.Int(15, ev.track(e));
    row.Insert();
  }
  return row.status();
}

// torch's memory records ("[memory]" instants: what was allocated or freed, where, and the
// totals after it).
Status WriteMemory(const Trace& t, const Slices& slices, const Database& db) {
  const std::optional<uint32_t> memory_name = t.strings.Find("[memory]");
  if (!memory_name) return Status::Ok();
  const EventTable& ev = t.events;
  ArgReader reader(
      t, {"Device Type", "Device Id", "Addr", "Bytes", "Total Allocated", "Total Reserved"});
  Inserter row(db, "INSERT INTO memory VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t s = 0; s < slices.event.size(); ++s) {
    const uint64_t e = slices.event[s];
    if (ev.name(e) != *memory_name) continue;
    row.Int(1, static_cast<int64_t>(s));
    row.Int(2, t.origin_ns + ev.ts(e));
    row.Int(3, ev.track(e));
    for (size_t key = 0; key < 6; ++key) {
      int64_t v = 0;
      const bool present = reader.GetInt(ev.args(e), key, &v);
      row.OptionalInt(4 + static_cast<int>(key), present, v);
    }
    row.Insert();
  }
  return row.status();
}

// 'C' events: one track per process, event name and argument key, named "NAME KEY" as
// Perfetto's JSON importer names them.
Status WriteCounters(const Trace& t, const Database& db) {
  const EventTable& ev = t.events;
  std::unordered_map<uint32_t, int64_t> upid_of_track;
  for (size_t p = 0; p < t.processes().size(); ++p)
    for (uint32_t tr : t.processes()[p].tracks) upid_of_track[tr] = static_cast<int64_t>(p);
  std::map<std::pair<int64_t, std::string>, int64_t> tracks;
  Inserter track(db, "INSERT INTO counter_track VALUES (?, ?, ?)");
  Inserter value(db, "INSERT INTO counter (ts, track_id, value) VALUES (?, ?, ?)");
  for (size_t e = 0; e < ev.size(); ++e) {
    if (ev.phase(e) != 'C' || ev.args(e).empty()) continue;
    auto upid = upid_of_track.find(ev.track(e));
    const int64_t process = upid != upid_of_track.end() ? upid->second : -1;
    for (const ArgStore::View::Item item : ArgStore::View(&t.args, ev.args(e))) {
      if (item.top_level || !item.value.is_number()) continue;
      std::string name = std::string(t.str(ev.name(e))) + " " + std::string(t.str(item.key));
      auto [at, inserted] = tracks.try_emplace({process, name}, tracks.size());
      if (inserted) {
        track.Int(1, at->second);
        track.Text(2, at->first.second);
        track.OptionalInt(3, process >= 0, process);
        track.Insert();
      }
      value.Int(1, t.origin_ns + ev.ts(e));
      value.Int(2, at->second);
      value.Real(3, item.value.AsDouble());
      value.Insert();
    }
  }
  if (Status s = track.status(); !s.ok()) return s;
  return value.status();
}

Status WriteMetadata(const Trace& t, const Database& db) {
  Inserter row(db, "INSERT INTO metadata (name, int_value, str_value) VALUES (?, ?, ?)");
  auto add_int = [&](const char* name, int64_t v) {
    row.Text(1, name);
    row.Int(2, v);
    row.Null(3);
    row.Insert();
  };
  if (t.has_origin) add_int("trace_origin_ns", t.origin_ns);
  add_int("trace_begin_ns", t.origin_ns + t.begin_ns());
  add_int("trace_end_ns", t.origin_ns + t.end_ns());
  row.Text(1, "source_format");
  row.Null(2);
  row.Text(3, t.source_format);
  row.Insert();
  // The trace's own top-level members, as their JSON text.
  for (const auto& [key, json] : t.metadata) {
    row.Text(1, key);
    row.Null(2);
    row.Text(3, json);
    row.Insert();
  }
  return row.status();
}

// torch's key_averages() rows (trace:key_averages() in Lua), one per operator name.
Status WriteOperators(const Trace& t, const Database& db) {
  KeyAverages averages = ComputeKeyAverages(BuildFunctionEvents(t), false, 0);
  Inserter row(db, "INSERT INTO op VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const AverageRow& a : averages.rows) {
    row.Text(1, averages.events->strings.Get(a.key));
    row.Int(2, a.count);
    row.Int(3, a.cpu_time_total_ns);
    row.Int(4, a.self_cpu_time_total_ns);
    row.Int(5, a.cuda_time_total_ns);
    row.Int(6, a.self_cuda_time_total_ns);
    row.Int(7, a.cpu_memory_usage);
    row.Int(8, a.self_cpu_memory_usage);
    row.Int(9, a.cuda_memory_usage);
    row.Int(10, a.self_cuda_memory_usage);
    row.Int(11, a.flops);
    row.Text(12, a.device == DeviceType::kCuda ? "cuda" : "cpu");
    row.Text(13, EventKindName(a.kind));
    row.Insert();
  }
  return row.status();
}

}  // namespace

Status WriteTraceTables(const Trace& trace, const Database& db) {
  // Nothing is read back while writing, and a failed write throws the whole database away.
  if (Status s = db.Execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"); !s.ok())
    return s;
  if (Status s = db.Execute(kSchema); !s.ok()) return s;
  const Slices slices(trace);
  using Step = Status (*)(const Trace&, const Slices&, const Database&);
  const Step steps[] = {
      [](const Trace& t, const Slices&, const Database& d) { return WriteThreads(t, d); },
      WriteSlicesAndArgs,
      WriteFlows,
      WriteKernels,
      WriteMemory,
      [](const Trace& t, const Slices&, const Database& d) { return WriteCounters(t, d); },
      [](const Trace& t, const Slices&, const Database& d) { return WriteMetadata(t, d); },
      [](const Trace& t, const Slices&, const Database& d) { return WriteOperators(t, d); },
  };
  for (Step step : steps) {
    if (Status s = step(trace, slices, db); !s.ok()) return s;
  }
  if (Status s = db.Execute(kIndexes); !s.ok()) return s;
  return db.Execute("COMMIT;");
}

}  // namespace profsh::sqlite
