// The trace's tables in SQLite with Perfetto trace processor's names, columns and ids for what a
// Chrome JSON trace holds (its JSON importer is the model: perfetto_layout.cpp), and Perfetto's
// views over them; profsh's own tables come from sqlite_profsh_tables.cpp. Times are
// nanoseconds, absolute when the trace says when it began.
#include "engine/exporters/sqlite_tables.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/analysis/event_kind.h"
#include "engine/exporters/sqlite_arg_sets.h"
#include "engine/exporters/sqlite_modules.h"

namespace profsh::sqlite {

namespace {

// Perfetto keeps most tables as "__intrinsic_" tables behind views that add derived or alias
// columns (slice.cat, thread.id, args.display_value); so does this schema, so that the columns
// and their order are Perfetto's. An argument's key and flat_key are stored once per key, not
// per row (__intrinsic_arg_key): in the file their text would otherwise take half of every
// args row. Columns Perfetto has but a JSON trace never fills
// are there, NULL. `slice.kind` is profsh's.
constexpr char kSchema[] = R"sql(
CREATE TABLE __intrinsic_process (upid INTEGER PRIMARY KEY, pid INTEGER, name TEXT,
  start_ts INTEGER, end_ts INTEGER, parent_upid INTEGER, uid INTEGER, android_appid INTEGER,
  android_user_id INTEGER, cmdline TEXT, arg_set_id INTEGER, machine_id INTEGER);
CREATE VIEW process AS SELECT upid AS id, * FROM __intrinsic_process;
CREATE TABLE __intrinsic_thread (utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT,
  start_ts INTEGER, end_ts INTEGER, upid INTEGER, is_main_thread INTEGER, is_idle INTEGER,
  machine_id INTEGER, arg_set_id INTEGER);
CREATE VIEW thread AS SELECT utid AS id, * FROM __intrinsic_thread;
CREATE TABLE __intrinsic_track (id INTEGER PRIMARY KEY, name TEXT, type TEXT,
  dimension_arg_set_id INTEGER, parent_id INTEGER, source_arg_set_id INTEGER,
  machine_id INTEGER, track_group_id INTEGER, event_type TEXT, counter_unit TEXT,
  utid INTEGER, upid INTEGER);
CREATE VIEW track AS SELECT id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id,
  machine_id, track_group_id FROM __intrinsic_track;
CREATE VIEW thread_track AS SELECT id, name, type, parent_id, source_arg_set_id, machine_id,
  utid FROM __intrinsic_track WHERE event_type = 'slice' AND utid IS NOT NULL;
CREATE VIEW process_track AS SELECT id, name, type, parent_id, source_arg_set_id, machine_id,
  upid FROM __intrinsic_track WHERE event_type = 'slice' AND utid IS NULL AND upid IS NOT NULL;
CREATE VIEW counter_track AS SELECT id, name, parent_id, type, dimension_arg_set_id,
  source_arg_set_id, machine_id, counter_unit AS unit, NULL AS description
  FROM __intrinsic_track WHERE event_type = 'counter';
CREATE VIEW process_counter_track AS SELECT id, name, type, parent_id, source_arg_set_id,
  machine_id, counter_unit AS unit, NULL AS description, upid
  FROM __intrinsic_track WHERE event_type = 'counter' AND upid IS NOT NULL;
CREATE TABLE __intrinsic_slice (id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER,
  track_id INTEGER, category TEXT, name TEXT, depth INTEGER, parent_id INTEGER,
  arg_set_id INTEGER, thread_ts INTEGER, thread_dur INTEGER, thread_instruction_count INTEGER,
  thread_instruction_delta INTEGER, kind TEXT);
CREATE VIEW slice AS SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
  thread_ts, thread_dur, thread_instruction_count, thread_instruction_delta, category AS cat,
  id AS slice_id, kind FROM __intrinsic_slice;
CREATE TABLE __intrinsic_arg_key (id INTEGER PRIMARY KEY, key TEXT UNIQUE, flat_key TEXT);
CREATE TABLE __intrinsic_args (id INTEGER PRIMARY KEY, arg_set_id INTEGER, key_id INTEGER,
  int_value INTEGER, string_value TEXT, real_value REAL, value_type TEXT);
CREATE VIEW args AS SELECT a.id, a.arg_set_id, k.flat_key AS flat_key, k.key AS key, a.int_value, a.string_value, a.real_value, a.value_type,
  CASE value_type
    WHEN 'int' THEN CAST(int_value AS TEXT)
    WHEN 'uint' THEN printf('%u', int_value)
    WHEN 'string' THEN string_value
    WHEN 'real' THEN CAST(real_value AS TEXT)
    WHEN 'pointer' THEN printf('0x%x', int_value)
    WHEN 'bool' THEN CASE WHEN int_value != 0 THEN 'true' ELSE 'false' END
    WHEN 'json' THEN string_value
    ELSE NULL
  END AS display_value
  FROM __intrinsic_args a JOIN __intrinsic_arg_key k ON k.id = a.key_id;
CREATE TABLE flow (id INTEGER PRIMARY KEY, slice_out INTEGER, slice_in INTEGER,
  trace_id INTEGER, arg_set_id INTEGER, category TEXT, name TEXT);
CREATE TABLE counter (id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER, value REAL,
  arg_set_id INTEGER);
CREATE TABLE metadata (id INTEGER PRIMARY KEY, name TEXT, key_type TEXT, int_value INTEGER,
  str_value TEXT, machine_id INTEGER, trace_id INTEGER);
CREATE TABLE stats (id INTEGER PRIMARY KEY, name TEXT, key INTEGER, idx INTEGER, severity TEXT,
  source TEXT, value INTEGER, description TEXT, machine_id INTEGER, trace_id INTEGER);
CREATE TABLE __profsh_kernel (slice_id INTEGER PRIMARY KEY, kind TEXT, device INTEGER,
  stream INTEGER, correlation INTEGER, launch_slice_id INTEGER, op_slice_id INTEGER, grid TEXT,
  block TEXT, registers_per_thread INTEGER, shared_memory INTEGER);
CREATE VIEW kernel AS SELECT k.slice_id, s.ts, s.dur, s.name, k.kind, k.device, k.stream,
  k.correlation, k.launch_slice_id, k.op_slice_id, k.grid, k.block, k.registers_per_thread,
  k.shared_memory, s.track_id FROM __profsh_kernel k JOIN __intrinsic_slice s ON s.id = k.slice_id;
CREATE TABLE memory (slice_id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER,
  device_type INTEGER, device_id INTEGER, addr INTEGER, bytes INTEGER, total_allocated INTEGER,
  total_reserved INTEGER);
CREATE TABLE op (name TEXT, count INTEGER, cpu_time_total_ns INTEGER,
  self_cpu_time_total_ns INTEGER, cuda_time_total_ns INTEGER, self_cuda_time_total_ns INTEGER,
  cpu_memory_usage INTEGER, self_cpu_memory_usage INTEGER, cuda_memory_usage INTEGER,
  self_cuda_memory_usage INTEGER, flops INTEGER, device TEXT, kind TEXT);
)sql";

// Made after the rows are in: one sort per index instead of a B-tree insert per row. Each serves
// a join users write: a slice's children (parent_id), a track's slices, a slice's or an arg
// set's args, a thread's process, a track's thread or process.
constexpr char kIndexes[] = R"sql(
CREATE INDEX slice_ts ON __intrinsic_slice (ts);
CREATE INDEX slice_track ON __intrinsic_slice (track_id, ts);
CREATE INDEX slice_name ON __intrinsic_slice (name);
CREATE INDEX slice_parent ON __intrinsic_slice (parent_id);
CREATE INDEX slice_arg_set ON __intrinsic_slice (arg_set_id);
CREATE INDEX args_set_key ON __intrinsic_args (arg_set_id, key_id);
CREATE INDEX thread_upid ON __intrinsic_thread (upid);
CREATE INDEX track_utid ON __intrinsic_track (utid);
CREATE INDEX track_upid ON __intrinsic_track (upid);
CREATE INDEX flow_out ON flow (slice_out);
CREATE INDEX flow_in ON flow (slice_in);
CREATE INDEX counter_track_ts ON counter (track_id, ts);
CREATE INDEX kernel_correlation ON __profsh_kernel (correlation);
)sql";

void TextOrNull(Inserter& row, int column, const Trace& t, uint32_t string_id) {
  if (string_id == 0) {
    row.Null(column);
  } else {
    row.Text(column, t.str(string_id));
  }
}

Status WriteThreads(const Trace& t, const PerfettoLayout& layout, const Database& db) {
  Inserter process(db, "INSERT INTO __intrinsic_process (upid, pid, name) VALUES (?, ?, ?)");
  for (size_t upid = 0; upid < layout.processes.size(); ++upid) {
    const PerfettoLayout::Process& p = layout.processes[upid];
    process.Int(1, static_cast<int64_t>(upid));
    process.OptionalInt(2, !p.pid.is_string, p.pid.number);
    TextOrNull(process, 3, t, p.name);
    process.Insert();
  }
  Inserter thread(db,
                  "INSERT INTO __intrinsic_thread (utid, tid, name, upid, is_main_thread, "
                  "is_idle) VALUES (?, ?, ?, ?, ?, ?)");
  for (size_t utid = 0; utid < layout.threads.size(); ++utid) {
    const PerfettoLayout::Thread& th = layout.threads[utid];
    thread.Int(1, static_cast<int64_t>(utid));
    thread.OptionalInt(2, !th.tid.is_string, th.tid.number);
    TextOrNull(thread, 3, t, th.name);
    thread.OptionalInt(4, th.upid != kNone, th.upid);
    thread.Int(5, th.is_main ? 1 : 0);
    thread.Int(6, utid == 0 ? 1 : 0);
    thread.Insert();
  }
  if (Status s = process.status(); !s.ok()) return s;
  return thread.status();
}

Status WriteTracks(const PerfettoLayout& layout, const Database& db) {
  Inserter row(db,
               "INSERT INTO __intrinsic_track (id, name, type, event_type, utid, upid) "
               "VALUES (?, ?, ?, ?, ?, ?)");
  for (size_t id = 0; id < layout.tracks.size(); ++id) {
    const PerfettoLayout::TrackRow& track = layout.tracks[id];
    row.Int(1, static_cast<int64_t>(id));
    const char* type = "thread_execution";
    switch (track.type) {
      case PerfettoLayout::TrackType::kThread:
        break;
      case PerfettoLayout::TrackType::kProcessInstant:
        type = "chrome_process_instant";
        break;
      case PerfettoLayout::TrackType::kGlobalInstant:
        type = "legacy_chrome_global_instants";
        break;
      case PerfettoLayout::TrackType::kCounter:
        type = "json_counter";
        break;
    }
    if (track.name.empty()) {
      row.Null(2);
    } else {
      row.Text(2, track.name);
    }
    row.Text(3, type);
    row.Text(4, track.type == PerfettoLayout::TrackType::kCounter ? "counter" : "slice");
    row.OptionalInt(5, track.utid != kNone, track.utid);
    row.OptionalInt(6, track.upid != kNone, track.upid);
    row.Insert();
  }
  return row.status();
}

// A top-level microsecond field ("tts", "tdur") in ns; false when the event has none.
bool ThreadTime(const Trace& t, ArgRef ref, std::optional<uint32_t> key, int64_t* ns) {
  ArgValue v;
  if (!key || ref.empty() || !ArgStore::View(&t.args, ref).Find(*key, &v, true) || !v.is_number())
    return false;
  *ns = std::llround(v.AsDouble() * 1000.0);
  return true;
}

Status WriteSlicesAndArgs(const Trace& t, const PerfettoLayout& layout, const Database& db) {
  const EventTable& ev = t.events;
  Inserter slice(db,
                 "INSERT INTO __intrinsic_slice (id, ts, dur, track_id, category, name, depth, "
                 "parent_id, arg_set_id, thread_ts, thread_dur, kind) VALUES "
                 "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  ArgSetWriter arg_sets(t, db);
  const std::optional<uint32_t> tts = t.strings.Find("tts");
  const std::optional<uint32_t> tdur = t.strings.Find("tdur");
  std::vector<const char*> kinds(t.categories.size());
  for (size_t c = 0; c < kinds.size(); ++c)
    kinds[c] = EventKindName(KindOfCategory(t.category_name(static_cast<uint16_t>(c))));
  for (size_t s = 0; s < layout.slice_event.size(); ++s) {
    const uint64_t e = layout.slice_event[s];
    const uint16_t category = ev.category(e);
    const ArgRef ref = ev.args(e);
    slice.Int(1, static_cast<int64_t>(s));
    slice.Int(2, t.origin_ns + ev.ts(e));
    // A range whose end was never seen lasts "until further notice": -1, as in Perfetto.
    const bool unterminated = (ev.flags(e) & kFlagUnterminated) != 0;
    slice.Int(3, ev.phase(e) != 'X' ? 0 : unterminated ? -1 : ev.dur(e));
    slice.Int(4, layout.slice_track[s]);
    if (category == 0) {
      slice.Null(5);
    } else {
      slice.Text(5, t.category_name(category));
    }
    slice.Text(6, t.str(ev.name(e)));
    slice.Int(7, layout.depth[s]);
    slice.OptionalInt(8, layout.parent[s] != kNone, layout.parent[s]);
    const int64_t arg_set = arg_sets.Add(ref);
    slice.OptionalInt(9, arg_set != kNone, arg_set);
    int64_t thread_ts = 0, thread_dur = 0;
    const bool has_thread_ts = ThreadTime(t, ref, tts, &thread_ts);
    const bool has_thread_dur = ev.phase(e) == 'X' && ThreadTime(t, ref, tdur, &thread_dur);
    slice.OptionalInt(10, has_thread_ts, thread_ts);
    slice.OptionalInt(11, has_thread_dur, thread_dur);
    slice.Text(12, kinds[category]);
    slice.Insert();
  }
  if (Status st = slice.status(); !st.ok()) return st;
  return arg_sets.status();
}

Status WriteFlows(const Trace& t, const PerfettoLayout& layout, const Database& db) {
  const EventTable& ev = t.events;
  Inserter flow(db,
                "INSERT INTO flow (id, slice_out, slice_in, category, name) "
                "VALUES (?, ?, ?, ?, ?)");
  for (size_t id = 0; id < layout.flows.size(); ++id) {
    const PerfettoLayout::Flow& f = layout.flows[id];
    flow.Int(1, static_cast<int64_t>(id));
    flow.Int(2, f.slice_out);
    flow.Int(3, f.slice_in);
    if (ev.category(f.event) == 0) {
      flow.Null(4);
    } else {
      flow.Text(4, t.category_name(ev.category(f.event)));
    }
    flow.Text(5, t.str(ev.name(f.event)));
    flow.Insert();
  }
  return flow.status();
}

Status WriteCounters(const Trace& t, const PerfettoLayout& layout, const Database& db) {
  Inserter value(db, "INSERT INTO counter (id, ts, track_id, value) VALUES (?, ?, ?, ?)");
  for (size_t id = 0; id < layout.counters.size(); ++id) {
    const PerfettoLayout::Counter& c = layout.counters[id];
    value.Int(1, static_cast<int64_t>(id));
    value.Int(2, t.origin_ns + t.events.ts(c.event));
    value.Int(3, c.track);
    value.Real(4, c.value);
    value.Insert();
  }
  return value.status();
}

Status WriteMetadata(const Trace& t, const Database& db) {
  Inserter row(db,
               "INSERT INTO metadata (name, key_type, int_value, str_value) "
               "VALUES (?, 'single', ?, ?)");
  auto add_int = [&](const char* name, int64_t v) {
    row.Text(1, name);
    row.Int(2, v);
    row.Null(3);
    row.Insert();
  };
  auto add_text = [&](std::string_view name, std::string_view v) {
    row.Text(1, name);
    row.Null(2);
    row.Text(3, v);
    row.Insert();
  };
  if (t.source_format.find("json") != std::string::npos) add_text("trace_type", "json");
  if (t.has_origin) add_int("trace_origin_ns", t.origin_ns);
  add_int("trace_begin_ns", t.origin_ns + t.begin_ns());
  add_int("trace_end_ns", t.origin_ns + t.end_ns());
  add_text("source_format", t.source_format);
  // The trace's own top-level members, as their JSON text.
  for (const auto& [key, json] : t.metadata) add_text(key, json);
  return row.status();
}

// Perfetto's name, severity and source for the import's kinds it also counts; profsh's own
// kinds are errors found in the trace, as Perfetto files its JSON repairs.
struct StatInfo {
  const char* name;
  const char* severity;
  const char* source;
};
constexpr StatInfo kPerfettoStats[] = {
    {"json_tokenizer_failure", "error", "trace"},
    {"json_parser_failure", "error", "trace"},
    {"json_display_time_unit", "info", "trace"},
    {"misplaced_end_event", "data_loss", "analysis"},
    {"flow_duplicate_id", "error", "trace"},
    {"flow_no_enclosing_slice", "error", "trace"},
    {"flow_end_without_start", "info", "trace"},
    {"flow_invalid_id", "error", "trace"},
    {"flow_without_direction", "error", "trace"},
    {"slice_spill_overlapping_complete_event", "error", "analysis"},
};

// One row per stats name, as Perfetto has: kinds of repair that share a name (three are
// json_tokenizer_failure) are summed, their descriptions joined.
Status WriteStats(const Trace& t, const Database& db) {
  struct Row {
    int64_t count = 0;
    bool data_lost = false;
    std::string description;
  };
  std::vector<std::pair<std::string, Row>> rows;  // in the order of first appearance
  for (const Trace::ImportStat& stat : t.import_stats) {
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == stat.name; });
    if (it == rows.end()) it = rows.insert(rows.end(), {stat.name, Row{}});
    Row& r = it->second;
    r.count += stat.count;
    r.data_lost = r.data_lost || stat.data_lost;
    if (!r.description.empty()) r.description += "; ";
    r.description += stat.first_place.empty()
                         ? stat.description
                         : stat.description + " (first at " + stat.first_place + ")";
  }
  Inserter insert(db,
                  "INSERT INTO stats (name, idx, severity, source, value, description) "
                  "VALUES (?, NULL, ?, ?, ?, ?)");
  for (const auto& [name, r] : rows) {
    // Perfetto's severity and source where it has the name; profsh's own kinds are data loss
    // when something was dropped, else information.
    StatInfo info{name.c_str(), r.data_lost ? "data_loss" : "info", "trace"};
    for (const StatInfo& known : kPerfettoStats)
      if (name == known.name) info = known;
    insert.Text(1, name);
    insert.Text(2, info.severity);
    insert.Text(3, info.source);
    insert.Int(4, r.count);
    insert.Text(5, r.description);
    insert.Insert();
  }
  return insert.status();
}

}  // namespace

Status WriteTraceTables(const Trace& trace, const Database& db) {
  // Nothing is read back while writing, and a failed write throws the whole database away.
  // The indexes' sorts stay in memory rather than in temporary files.
  if (Status s = db.Execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                            "PRAGMA temp_store=MEMORY; BEGIN;");
      !s.ok())
    return s;
  if (Status s = db.Execute(kSchema); !s.ok()) return s;
  const PerfettoLayout layout = BuildPerfettoLayout(trace);
  using Step = Status (*)(const Trace&, const PerfettoLayout&, const Database&);
  const Step steps[] = {
      WriteThreads,
      [](const Trace&, const PerfettoLayout& l, const Database& d) { return WriteTracks(l, d); },
      WriteSlicesAndArgs,
      WriteFlows,
      WriteCounters,
      WriteKernels,
      WriteMemory,
      [](const Trace& t, const PerfettoLayout&, const Database& d) { return WriteMetadata(t, d); },
      [](const Trace& t, const PerfettoLayout&, const Database& d) { return WriteStats(t, d); },
      [](const Trace& t, const PerfettoLayout&, const Database& d) { return WriteOperators(t, d); },
  };
  for (Step step : steps) {
    if (Status s = step(trace, layout, db); !s.ok()) return s;
  }
  if (Status s = db.Execute(kIndexes); !s.ok()) return s;
  if (Status s = CreateModuleViews(db); !s.ok()) return s;
  return db.Execute("COMMIT;");
}

}  // namespace profsh::sqlite
