// The SQL entry points on fuzzed traces: every trace that loads is put in SQLite both ways a user
// does it (`profsh sql TRACE`: an in-memory database; `t:to_sqlite`: the exporter's file, then
// queried read-only as `profsh sql FILE` does), and fixed queries run over it. Their answers are
// compared with the trace's own counts (rows per table) and with what the tables promise of each
// other (a parent slice one level up on the same track, flows and kernels naming slices that
// exist), so a table that silently loses or invents rows aborts, not only a crash.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/event_kind.h"
#include "engine/exporters/exporter.h"
#include "engine/exporters/sqlite_database.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using profsh::AnalysisRows;
using profsh::Trace;

// One row: each column a count the trace itself gives (the first block) or a count of rows that
// break a promise between tables (the second block, all 0).
constexpr char kCounts[] = R"sql(SELECT
  (SELECT count(*) FROM slice) AS slices,
  (SELECT count(*) FROM thread) AS threads,
  (SELECT count(*) FROM process) AS processes,
  (SELECT count(arg_set_id) FROM slice) AS slices_with_args,
  (SELECT count(*) FROM counter) AS counters,
  (SELECT count(*) FROM memory) AS memory,
  (SELECT count(*) FROM kernel) AS kernels,
  (SELECT count(*) FROM metadata) AS metadata,
  (SELECT count(*) FROM stats) AS stats,
  (SELECT count(*) FROM op) AS ops,
  (SELECT coalesce(sum(count), 0) FROM op) AS op_calls,
  (SELECT count(*) FROM slice JOIN thread_track tt ON slice.track_id = tt.id
     JOIN thread USING (utid)) AS slices_on_threads,
  (SELECT count(*) FROM slice JOIN track ON slice.track_id = track.id) AS slices_on_tracks,
  (SELECT count(*) FROM slice c LEFT JOIN slice p ON c.parent_id = p.id
     WHERE (c.parent_id IS NULL) != (c.depth = 0) OR (c.parent_id IS NOT NULL AND
       (p.id IS NULL OR p.depth + 1 != c.depth OR p.track_id != c.track_id OR p.ts > c.ts)))
     AS bad_parents,
  (SELECT count(*) FROM flow WHERE slice_out NOT IN (SELECT id FROM slice)
     OR slice_in NOT IN (SELECT id FROM slice)) AS bad_flows,
  (SELECT count(*) FROM kernel k LEFT JOIN slice s ON k.slice_id = s.id
     WHERE s.id IS NULL OR s.ts != k.ts OR s.name != k.name OR s.dur != k.dur OR
       (k.launch_slice_id IS NOT NULL AND k.launch_slice_id NOT IN (SELECT id FROM slice)))
     AS bad_kernels,
  (SELECT count(*) FROM memory m LEFT JOIN slice s ON m.slice_id = s.id
     WHERE s.id IS NULL OR s.name != '[memory]') AS bad_memory,
  (SELECT count(*) FROM args WHERE arg_set_id NOT IN (SELECT arg_set_id FROM slice))
     AS orphan_args,
  (SELECT count(*) FROM slice WHERE arg_set_id IS NOT NULL
     AND arg_set_id NOT IN (SELECT arg_set_id FROM args)) AS slices_missing_args,
  (SELECT count(*) FROM (SELECT * FROM slice ORDER BY id LIMIT 200) s
     WHERE (SELECT count(*) FROM descendant_slice(s.id))
     != (SELECT count(*) FROM slice d WHERE d.track_id = s.track_id AND d.ts >= s.ts
         AND (s.dur < 0 OR d.ts <= s.ts + s.dur) AND d.depth > s.depth
         AND s.id IN (SELECT id FROM ancestor_slice(d.id)))) AS bad_descendants,
  (SELECT count(*) FROM counter WHERE track_id NOT IN (SELECT id FROM counter_track))
     AS orphan_counters)sql";

const char* const kColumns[] = {"slices",
                                "threads",
                                "processes",
                                "slices_with_args",
                                "counters",
                                "memory",
                                "kernels",
                                "metadata",
                                "stats",
                                "ops",
                                "op_calls",
                                "slices_on_threads",
                                "slices_on_tracks",
                                "bad_parents",
                                "bad_flows",
                                "bad_kernels",
                                "bad_memory",
                                "orphan_args",
                                "slices_missing_args",
                                "bad_descendants",
                                "orphan_counters"};
constexpr size_t kColumnCount = sizeof kColumns / sizeof kColumns[0];

bool IsSlice(char phase) {
  return phase == 'X' || phase == 'i' || phase == 'I' || phase == 'R';
}

// An instant's scope letter ("s": 'g' global, 'p' process), 't' otherwise.
char Scope(const Trace& t, size_t e) {
  using namespace profsh;
  const std::optional<uint32_t> key = t.strings.Find("s");
  ArgValue v;
  if (t.events.phase(e) == 'X' || !key ||
      !ArgStore::View(&t.args, t.events.args(e)).Find(*key, &v, true) ||
      v.type != ArgType::kString || t.str(v.str).empty())
    return 't';
  return t.str(v.str)[0];
}

// Whether JSON text has a value other than null, an empty array or object: a string that is
// not a member name, a number, true or false (what Perfetto's importer makes rows of).
bool HasJsonLeaf(std::string_view json) {
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      size_t end = i + 1;
      while (end < json.size() && json[end] != '"') end += json[end] == '\\' ? 2 : 1;
      size_t next = end + 1;
      while (next < json.size() &&
             (json[next] == ' ' || json[next] == '\n' || json[next] == '\t' || json[next] == '\r'))
        ++next;
      if (next >= json.size() || json[next] != ':') return true;
      i = end;
    } else if (c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9')) {
      return true;
    }
  }
  return false;
}

// What the tables must hold, counted from the trace as the tables document them
// (docs/ANALYSIS.md, "SQL over a trace"), not through the exporter's own code.
std::vector<int64_t> Expected(const Trace& t) {
  using namespace profsh;
  const EventTable& ev = t.events;
  const std::optional<uint32_t> memory_name = t.strings.Find("[memory]");
  int64_t slices = 0, with_args = 0, counters = 0, memory = 0, kernels = 0, on_threads = 0;
  for (size_t e = 0; e < ev.size(); ++e) {
    const char phase = ev.phase(e);
    if (phase == 'C') {
      for (const ArgStore::View::Item item : ArgStore::View(&t.args, ev.args(e)))
        counters += !item.top_level && item.value.is_number();
    }
    if (!IsSlice(phase)) continue;
    ++slices;
    const char scope = Scope(t, e);
    on_threads += scope != 'g' && scope != 'p';
    bool has_args = false;
    for (const ArgStore::View::Item item : ArgStore::View(&t.args, ev.args(e)))
      has_args |= !item.top_level && item.value.type != ArgType::kNull &&
                  (item.value.type != ArgType::kJson || HasJsonLeaf(t.str(item.value.str)));
    with_args += has_args;
    memory += memory_name && ev.name(e) == *memory_name;
    const EventKind kind = KindOfCategory(t.category_name(ev.category(e)));
    kernels += phase == 'X' &&
               (kind == EventKind::kKernel || kind == EventKind::kCopy || kind == EventKind::kSet);
  }
  const KeyAverages averages = ComputeKeyAverages(BuildFunctionEvents(t), false, 0);
  int64_t calls = 0;
  for (const AverageRow& a : averages.rows) calls += a.count;
  // Perfetto's process tracker: a placeholder thread and process, each pid's process with its
  // main thread (tid = pid), and each (pid, tid) of the trace.
  std::set<std::string> pids, threads;
  for (const Track& track : t.tracks) {
    const std::string pid = (track.pid.is_string ? "s" : "n") + t.FormatIdent(track.pid);
    pids.insert(pid);
    threads.insert(pid + "/" + pid);
    threads.insert(pid + "/" + (track.tid.is_string ? "s" : "n") + t.FormatIdent(track.tid));
  }
  const bool json = t.source_format.find("json") != std::string::npos;
  return {slices,
          1 + static_cast<int64_t>(threads.size()),
          1 + static_cast<int64_t>(pids.size()),
          with_args,
          counters,
          memory,
          kernels,
          (json ? 1 : 0) + (t.has_origin ? 1 : 0) + 3 + static_cast<int64_t>(t.metadata.size()),
          static_cast<int64_t>(t.import_stats.size()),
          static_cast<int64_t>(averages.rows.size()),
          calls,
          on_threads,
          slices,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0};
}

[[noreturn]] void Fail(const char* how, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", how, what.c_str());
  std::abort();
}

void CheckCounts(const char* how, const profsh::Result<AnalysisRows>& got,
                 const std::vector<int64_t>& want) {
  if (!got.ok()) Fail(how, "the query fails: " + got.error().message);
  const AnalysisRows& rows = got.value();
  if (rows.rows.size() != 1 || rows.columns.size() != kColumnCount)
    Fail(how, "the counts query gives " + std::to_string(rows.rows.size()) + " rows");
  std::string differences;
  for (size_t c = 0; c < kColumnCount; ++c) {
    const profsh::Cell cell = rows.rows.cell(0, c);
    if (cell.kind != profsh::Cell::Kind::kInt || cell.int_value != want[c])
      differences += std::string(" ") + kColumns[c] + "=" + cell.Format() + " (want " +
                     std::to_string(want[c]) + ")";
  }
  if (!differences.empty()) Fail(how, "tables disagree with the trace:" + differences);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh;
  auto trace = fuzz::LoadInput(data, size);
  if (!trace.ok()) return 0;
  const Trace& t = *trace.value();
  const std::vector<int64_t> want = Expected(t);
  CheckCounts("profsh sql (in memory)", QueryTrace(t, kCounts), want);
  const std::string path = fuzz::ScratchPath("trace.sqlite");
  if (Status s = ExportTrace(t, "sqlite", path); !s.ok()) Fail("the sqlite export", s.message());
  if (!IsSqliteFile(path)) Fail("the sqlite export", "the file has no SQLite header");
  auto from_file = QueryDatabaseFile(path, kCounts);
  std::remove(path.c_str());
  CheckCounts("the sqlite export, queried", from_file, want);
  return 0;
}
