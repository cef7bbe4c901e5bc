// profsh's own tables beside Perfetto's: device work with its launch and operator (kernel),
// torch's memory records (memory) and torch's key_averages() rows (op).
#include <unordered_map>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/event_kind.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/exporters/sqlite_tables.h"

namespace profsh::sqlite {

// Device work, with the runtime call that launched it (same correlation id) and the slice that
// call ran in (the operator, usually).
Status WriteKernels(const Trace& t, const PerfettoLayout& slices, const Database& db) {
  const EventTable& ev = t.events;
  enum { kDevice, kStream, kCorrelation, kGrid, kBlock, kRegisters, kSharedMemory };
  ArgReader reader(t, {"device", "stream", "correlation", "grid", "block", "registers per thread",
                       "shared memory"});
  std::vector<EventKind> kind(t.categories.size());
  for (size_t c = 0; c < kind.size(); ++c)
    kind[c] = KindOfCategory(t.category_name(static_cast<uint16_t>(c)));
  std::unordered_map<int64_t, int64_t> launch_of;
  for (size_t s = 0; s < slices.slice_event.size(); ++s) {
    const uint64_t e = slices.slice_event[s];
    int64_t correlation;
    if (kind[ev.category(e)] == EventKind::kRuntime &&
        reader.GetInt(ev.args(e), kCorrelation, &correlation))
      launch_of.emplace(correlation, static_cast<int64_t>(s));
  }
  // ts, dur, name and track come from the slice (the kernel view joins them): long kernel names
  // are stored once.
  Inserter row(db, "INSERT INTO __profsh_kernel VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t s = 0; s < slices.slice_event.size(); ++s) {
    const uint64_t e = slices.slice_event[s];
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
    row.Text(2, EventKindName(k));
    optional_int(3, kDevice);
    optional_int(4, kStream);
    int64_t correlation = 0;
    const bool has_correlation = reader.GetInt(ref, kCorrelation, &correlation);
    row.OptionalInt(5, has_correlation, correlation);
    auto launch = has_correlation ? launch_of.find(correlation) : launch_of.end();
    const int64_t launch_slice = launch != launch_of.end() ? launch->second : kNone;
    row.OptionalInt(6, launch_slice != kNone, launch_slice);
    const int64_t op =
        launch_slice != kNone ? slices.parent[static_cast<size_t>(launch_slice)] : kNone;
    row.OptionalInt(7, op != kNone, op);
    optional_text(8, kGrid);
    optional_text(9, kBlock);
    optional_int(10, kRegisters);
    optional_int(11, kSharedMemory);
    row.Insert();
  }
  return row.status();
}

// torch's memory records ("[memory]" instants: what was allocated or freed, where, and the
// totals after it).
Status WriteMemory(const Trace& t, const PerfettoLayout& slices, const Database& db) {
  const std::optional<uint32_t> memory_name = t.strings.Find("[memory]");
  if (!memory_name) return Status::Ok();
  const EventTable& ev = t.events;
  ArgReader reader(
      t, {"Device Type", "Device Id", "Addr", "Bytes", "Total Allocated", "Total Reserved"});
  Inserter row(db, "INSERT INTO memory VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t s = 0; s < slices.slice_event.size(); ++s) {
    const uint64_t e = slices.slice_event[s];
    if (ev.name(e) != *memory_name) continue;
    row.Int(1, static_cast<int64_t>(s));
    row.Int(2, t.origin_ns + ev.ts(e));
    row.Int(3, slices.slice_track[s]);
    for (size_t key = 0; key < 6; ++key) {
      int64_t v = 0;
      const bool present = reader.GetInt(ev.args(e), key, &v);
      row.OptionalInt(4 + static_cast<int>(key), present, v);
    }
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

}  // namespace profsh::sqlite
