// SQL over a trace as Perfetto trace processor answers it: each table, view, function and module
// rule of docs/ANALYSIS.md ("SQL over a trace") on a small Chrome JSON trace whose expected rows
// are worked out by hand from Perfetto's documented behaviour (its JSON importer's sort order,
// slice nesting, id numbering, arg sets), and the speed rules on a generated trace of 300k slices.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "engine/exporters/exporter.h"
#include "engine/exporters/sqlite_database.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

// Times in µs. Perfetto's order (by ts; at one ts complete events first, the longer first; then
// file order) gives: M events (ts 0), main (0.5), parent (1, 10 µs), sibling (1, 1 µs), child
// (2), its flow start, the flow end (3), counter (4), inst (5), gi (6), pi (7), counter (8),
// i1 and i2 (12), z1 then z0 (13: z1 is longer).
const char kTrace[] = R"json({"traceEvents": [
 {"ph": "M", "name": "process_name", "pid": 10, "tid": 10, "ts": 0, "args": {"name": "trainer"}},
 {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "ts": 0, "args": {"name": "worker"}},
 {"ph": "X", "name": "child", "cat": "c", "pid": 10, "tid": 11, "ts": 2, "dur": 3,
  "tts": 1, "tdur": 2, "args": {"k": 1, "s": "x"}},
 {"ph": "X", "name": "parent", "cat": "c", "pid": 10, "tid": 11, "ts": 1, "dur": 10,
  "args": {"k": 1, "s": "x"}},
 {"ph": "X", "name": "sibling", "pid": 10, "tid": 11, "ts": 1, "dur": 1},
 {"ph": "i", "name": "inst", "pid": 10, "tid": 11, "ts": 5, "s": "t"},
 {"ph": "i", "name": "gi", "pid": 10, "tid": 11, "ts": 6, "s": "g"},
 {"ph": "i", "name": "pi", "pid": 10, "tid": 11, "ts": 7, "s": "p"},
 {"ph": "X", "name": "main", "pid": 10, "tid": 10, "ts": 0.5, "dur": 20,
  "args": {"flag": true, "dims": [1, 2], "r": 0.25}},
 {"ph": "s", "id": 1, "name": "fl", "cat": "f", "pid": 10, "tid": 11, "ts": 2},
 {"ph": "f", "id": 1, "name": "fl", "cat": "f", "bp": "e", "pid": 10, "tid": 10, "ts": 3},
 {"ph": "C", "name": "mem", "pid": 10, "tid": 11, "ts": 4, "args": {"a": 5, "b": 2.5}},
 {"ph": "C", "name": "mem", "pid": 10, "tid": 11, "ts": 8, "args": {"a": 6}},
 {"ph": "i", "name": "i1", "pid": 10, "tid": 11, "ts": 12},
 {"ph": "i", "name": "i2", "pid": 10, "tid": 11, "ts": 12},
 {"ph": "X", "name": "z0", "pid": 10, "tid": 11, "ts": 13, "dur": 0},
 {"ph": "X", "name": "z1", "pid": 10, "tid": 11, "ts": 13, "dur": 1}
]})json";

class SqlPerfetto : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trace_ = MustImport(kTrace).release();
    // What the JSON importer would have counted for a repaired trace (import helper's rows).
    trace_->import_stats.push_back({"json_parser_failure", 2, "event 7", "events dropped", true});
    trace_->import_stats.push_back(
        {"json_number_as_string", 3, "byte 120", "ts given as a string", false});
    // Two kinds under one Perfetto name are one row.
    trace_->import_stats.push_back(
        {"json_tokenizer_failure", 1, "event 2", "events without a phase dropped", true});
    trace_->import_stats.push_back(
        {"json_tokenizer_failure", 4, "event 5", "events without a timestamp dropped", true});
    auto db = TraceDatabase::Build(*trace_);
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = new std::shared_ptr<TraceDatabase>(db.value());
  }
  static void TearDownTestSuite() {
    delete db_;
    delete trace_;
  }

  static std::string Rows(const std::string& sql) {
    auto rows = (*db_)->Query(sql);
    if (!rows.ok()) return "ERROR: " + rows.error().message;
    return rows.value().FormatCsv();
  }

  static Trace* trace_;
  static std::shared_ptr<TraceDatabase>* db_;
};

Trace* SqlPerfetto::trace_ = nullptr;
std::shared_ptr<TraceDatabase>* SqlPerfetto::db_ = nullptr;

TEST_F(SqlPerfetto, SliceIdsFollowPerfettosSortOrder) {
  EXPECT_EQ(Rows("SELECT id, name, ts, dur, track_id, depth, parent_id FROM slice ORDER BY id"),
            "id,name,ts,dur,track_id,depth,parent_id\n"
            "0,main,500,20000,0,0,\n"
            "1,parent,1000,10000,1,0,\n"
            "2,sibling,1000,1000,1,1,1\n"
            "3,child,2000,3000,1,1,1\n"
            "4,inst,5000,0,1,1,1\n"
            "5,gi,6000,0,2,0,\n"
            "6,pi,7000,0,3,0,\n"
            "7,i1,12000,0,1,0,\n"
            "8,i2,12000,0,1,1,7\n"
            "9,z1,13000,1000,1,0,\n"
            "10,z0,13000,0,1,1,9\n");
}

TEST_F(SqlPerfetto, SliceHasThreadTimesAndPerfettosAliases) {
  EXPECT_EQ(Rows("SELECT slice_id, cat, thread_ts, thread_dur FROM slice WHERE id IN (1, 3)"),
            "slice_id,cat,thread_ts,thread_dur\n1,c,,\n3,c,1000,2000\n");
}

TEST_F(SqlPerfetto, ThreadsAndProcessesAsPerfettosProcessTracker) {
  // utid/upid 0 are Perfetto's idle placeholders; a new pid brings its main thread.
  EXPECT_EQ(Rows("SELECT id, upid, pid, name FROM process ORDER BY upid"),
            "id,upid,pid,name\n0,0,0,\n1,1,10,trainer\n");
  EXPECT_EQ(Rows("SELECT id, utid, tid, name, upid, is_main_thread FROM thread ORDER BY utid"),
            "id,utid,tid,name,upid,is_main_thread\n0,0,0,,0,1\n1,1,10,,1,1\n2,2,11,worker,1,0\n");
}

TEST_F(SqlPerfetto, TracksOfEachKind) {
  EXPECT_EQ(Rows("SELECT id, name, type FROM track ORDER BY id"),
            "id,name,type\n0,,thread_execution\n1,,thread_execution\n"
            "2,,legacy_chrome_global_instants\n3,,chrome_process_instant\n"
            "4,mem a,json_counter\n5,mem b,json_counter\n");
  EXPECT_EQ(Rows("SELECT id, utid FROM thread_track ORDER BY id"), "id,utid\n0,1\n1,2\n");
  EXPECT_EQ(Rows("SELECT id, upid FROM process_track"), "id,upid\n3,1\n");
  EXPECT_EQ(Rows("SELECT id, name FROM counter_track ORDER BY id"), "id,name\n4,mem a\n5,mem b\n");
  EXPECT_EQ(Rows("SELECT id, name, upid FROM process_counter_track ORDER BY id"),
            "id,name,upid\n4,mem a,1\n5,mem b,1\n");
  EXPECT_EQ(Rows("SELECT id, ts, track_id, value FROM counter ORDER BY id"),
            "id,ts,track_id,value\n0,4000,4,5.0\n1,4000,5,2.5\n2,8000,4,6.0\n");
}

TEST_F(SqlPerfetto, ArgSetsAreSharedAndNumberedByTheirFirstRow) {
  EXPECT_EQ(Rows("SELECT id, arg_set_id FROM slice WHERE arg_set_id IS NOT NULL ORDER BY id"),
            "id,arg_set_id\n0,0\n1,4\n3,4\n");
  EXPECT_EQ(Rows("SELECT id, arg_set_id, flat_key, key, int_value, string_value, real_value, "
                 "value_type, display_value FROM args ORDER BY id"),
            "id,arg_set_id,flat_key,key,int_value,string_value,real_value,value_type,"
            "display_value\n"
            "0,0,args.flag,args.flag,1,,,bool,true\n"
            "1,0,args.dims,args.dims[0],1,,,int,1\n"
            "2,0,args.dims,args.dims[1],2,,,int,2\n"
            "3,0,args.r,args.r,,,0.25,real,0.25\n"
            "4,4,args.k,args.k,1,,,int,1\n"
            "5,4,args.s,args.s,,x,,string,x\n");
}

TEST_F(SqlPerfetto, ExtractArg) {
  EXPECT_EQ(Rows("SELECT extract_arg(arg_set_id, 'args.k') AS k, "
                 "extract_arg(arg_set_id, 'args.s') AS s, "
                 "extract_arg(arg_set_id, 'args.none') AS none FROM slice WHERE id = 3"),
            "k,s,none\n1,x,\n");
  EXPECT_EQ(Rows("SELECT extract_arg(arg_set_id, 'args.flag') AS f, "
                 "extract_arg(arg_set_id, 'args.r') AS r FROM slice WHERE id = 0"),
            "f,r\n1,0.25\n");
  EXPECT_EQ(Rows("SELECT extract_arg(NULL, 'args.k') AS k"), "k\n\n");
}

TEST_F(SqlPerfetto, Flows) {
  EXPECT_EQ(Rows("SELECT id, slice_out, slice_in, category, name FROM flow"),
            "id,slice_out,slice_in,category,name\n0,3,0,f,fl\n");
}

TEST_F(SqlPerfetto, AncestorAndDescendantSlices) {
  EXPECT_EQ(Rows("SELECT id, name, depth FROM ancestor_slice(3)"), "id,name,depth\n1,parent,0\n");
  EXPECT_EQ(Rows("SELECT id FROM ancestor_slice(1)"), "id\n");
  EXPECT_EQ(Rows("SELECT id, name FROM descendant_slice(1)"),
            "id,name\n2,sibling\n3,child\n4,inst\n");
  // As a correlated join, the way Perfetto's own tests use them.
  EXPECT_EQ(Rows("SELECT s.name, a.name AS ancestor FROM slice s JOIN ancestor_slice(s.id) a "
                 "ORDER BY s.id, a.depth"),
            "name,ancestor\nsibling,parent\nchild,parent\ninst,parent\ni2,i1\nz0,z1\n");
  EXPECT_EQ(Rows("SELECT id FROM ancestor_slice(99)").substr(0, 12), "ERROR: SQLit");
  EXPECT_NE(Rows("SELECT id FROM ancestor_slice(99)").find("no row with id 99"), std::string::npos);
  EXPECT_NE(Rows("SELECT id FROM descendant_slice('x')").find("start id should be an integer"),
            std::string::npos);
}

TEST_F(SqlPerfetto, ConnectedFlows) {
  EXPECT_EQ(Rows("SELECT slice_out, slice_in FROM directly_connected_flow(3)"),
            "slice_out,slice_in\n3,0\n");
  EXPECT_EQ(Rows("SELECT slice_out, slice_in FROM directly_connected_flow(0)"),
            "slice_out,slice_in\n3,0\n");
  // Following: the slice's and its descendants' outgoing flows; preceding: its and its
  // ancestors' incoming ones.
  EXPECT_EQ(Rows("SELECT slice_out, slice_in FROM following_flow(1)"), "slice_out,slice_in\n3,0\n");
  EXPECT_EQ(Rows("SELECT slice_out, slice_in FROM following_flow(0)"), "slice_out,slice_in\n");
  EXPECT_EQ(Rows("SELECT slice_out, slice_in FROM preceding_flow(0)"), "slice_out,slice_in\n3,0\n");
  EXPECT_EQ(Rows("SELECT slice_out, slice_in FROM preceding_flow(3)"), "slice_out,slice_in\n");
}

TEST_F(SqlPerfetto, SlicesWithContextModule) {
  EXPECT_EQ(Rows("INCLUDE PERFETTO MODULE slices.with_context;\n"
                 "SELECT id, thread_name, tid, process_name, pid, utid, upid FROM thread_slice "
                 "WHERE depth = 0 ORDER BY id"),
            "id,thread_name,tid,process_name,pid,utid,upid\n"
            "0,,10,trainer,10,1,1\n1,worker,11,trainer,10,2,1\n7,worker,11,trainer,10,2,1\n"
            "9,worker,11,trainer,10,2,1\n");
  EXPECT_EQ(Rows("SELECT id, name, process_name, pid FROM process_slice"),
            "id,name,process_name,pid\n6,pi,trainer,10\n");
  // Thread and process slices, not the global instant.
  EXPECT_EQ(Rows("INCLUDE PERFETTO MODULE slices.with_context; "
                 "SELECT count(*) AS n, count(utid) AS on_threads FROM thread_or_process_slice"),
            "n,on_threads\n10,9\n");
}

TEST_F(SqlPerfetto, IncludeOfAModuleProfshLacksNamesItAndTheProvidedOnes) {
  const std::string error = Rows("INCLUDE PERFETTO MODULE android.startup.startups; SELECT 1");
  EXPECT_NE(error.find("android.startup.startups"), std::string::npos) << error;
  EXPECT_NE(error.find("slices.with_context"), std::string::npos) << error;
  EXPECT_EQ(Rows("include perfetto module slices.*; SELECT 1 AS x"), "x\n1\n");
  EXPECT_EQ(Rows("INCLUDE PERFETTO MODULE slices.with_context;"), "\n");
}

TEST_F(SqlPerfetto, StatsReadTheImportsRepairs) {
  EXPECT_EQ(Rows("SELECT name, idx, severity, source, value FROM stats ORDER BY name"),
            "name,idx,severity,source,value\n"
            "json_number_as_string,,info,trace,3\n"
            "json_parser_failure,,error,trace,2\n"
            "json_tokenizer_failure,,error,trace,5\n");
  EXPECT_EQ(Rows("SELECT description FROM stats WHERE name = 'json_number_as_string'"),
            "description\nts given as a string (first at byte 120)\n");
  EXPECT_EQ(Rows("SELECT description FROM stats WHERE name = 'json_tokenizer_failure'"),
            "description\nevents without a phase dropped (first at event 2); events without a "
            "timestamp dropped (first at event 5)\n");
}

TEST_F(SqlPerfetto, MetadataTable) {
  EXPECT_EQ(Rows("SELECT name, key_type, str_value FROM metadata WHERE name = 'trace_type'"),
            "name,key_type,str_value\ntrace_type,single,json\n");
}

TEST_F(SqlPerfetto, TheTracesTablesAreReadOnlyButTempTablesStay) {
  EXPECT_NE(Rows("DELETE FROM __intrinsic_slice").find("not authorized"), std::string::npos);
  EXPECT_NE(Rows("CREATE TABLE mine AS SELECT 1").find("not authorized"), std::string::npos);
  EXPECT_EQ(Rows("CREATE TEMP TABLE mine AS SELECT name FROM slice WHERE id = 0"), "\n");
  EXPECT_EQ(Rows("SELECT name FROM mine"), "name\nmain\n");
}

TEST(SqlDatabase, JsonArgumentsFlattenAsPerfettosImporter) {
  // Objects' members as KEY.MEMBER, array elements as KEY[i] with flat_key KEY; nulls and empty
  // arrays leave no row (a null element takes no index); a slice left with nothing has no set.
  auto trace = MustImport(R"json({"traceEvents": [
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
     "args": {"o": {"a": [10, null, "x\u00e9"], "b": null}, "shape": [[2, 3], []], "e": []}},
    {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "args": {"e": [], "n": null}}
  ]})json");
  auto rows = QueryTrace(*trace,
                         "SELECT s.name, a.flat_key, a.key, a.display_value FROM slice s "
                         "LEFT JOIN args a USING (arg_set_id) ORDER BY s.id, a.id");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ(rows.value().FormatCsv(),
            "name,flat_key,key,display_value\n"
            "a,args.o.a,args.o.a[0],10\n"
            "a,args.o.a,args.o.a[1],x\xc3\xa9\n"
            "a,args.shape,args.shape[0][0],2\n"
            "a,args.shape,args.shape[0][1],3\n"
            "b,,,\n");
  auto extract = QueryTrace(*trace,
                            "SELECT extract_arg(arg_set_id, 'args.shape[0][1]') AS d FROM slice "
                            "WHERE name = 'a'");
  ASSERT_TRUE(extract.ok()) << extract.error().message;
  EXPECT_EQ(extract.value().FormatCsv(), "d\n3\n");
}

TEST(SqlDatabase, StringPidsAndTidsNameTheirRows) {
  // Kineto's "Spans" process: pid and tid NULL, the strings as names (ANALYSIS.md); the process
  // still brings its main thread first.
  auto trace = MustImport(R"json({"traceEvents": [
    {"ph": "X", "name": "span", "pid": "Spans", "tid": "Thing", "ts": 1, "dur": 1}
  ]})json");
  auto rows = QueryTrace(*trace,
                         "SELECT t.utid, t.tid, t.name, t.is_main_thread, p.pid, p.name AS process "
                         "FROM thread t JOIN process p USING (upid) ORDER BY t.utid");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ(rows.value().FormatCsv(),
            "utid,tid,name,is_main_thread,pid,process\n0,0,,1,0,\n1,,,1,,Spans\n"
            "2,,Thing,0,,Spans\n");
}

TEST(SqlDatabase, FlowEndBeforeItsStartAtTheSameTsStillBinds) {
  // Kineto's integer microseconds: the launch and its kernel at one ts, the 'f' first in the
  // file. Perfetto drops such a flow (flow_end_without_start); profsh keeps it (ANALYSIS.md).
  auto trace = MustImport(R"json({"traceEvents": [
    {"ph": "X", "name": "kernel", "cat": "kernel", "pid": 0, "tid": 7, "ts": 5, "dur": 2},
    {"ph": "f", "id": 3, "name": "ac2g", "cat": "ac2g", "bp": "e", "pid": 0, "tid": 7, "ts": 5},
    {"ph": "X", "name": "launch", "cat": "cuda_runtime", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
    {"ph": "s", "id": 3, "name": "ac2g", "cat": "ac2g", "pid": 1, "tid": 1, "ts": 5},
    {"ph": "f", "id": 4, "name": "ac2g", "cat": "ac2g", "bp": "e", "pid": 0, "tid": 7, "ts": 5},
    {"ph": "s", "id": 4, "name": "ac2g", "cat": "ac2g", "pid": 1, "tid": 1, "ts": 6}
  ]})json");
  auto rows = QueryTrace(*trace,
                         "SELECT o.name AS out_name, i.name AS in_name FROM flow "
                         "JOIN slice o ON o.id = slice_out JOIN slice i ON i.id = slice_in");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  // Flow 4's start comes later in time: no flow, as in Perfetto.
  EXPECT_EQ(rows.value().FormatCsv(), "out_name,in_name\nlaunch,kernel\n");
}

TEST(SqlDatabase, ExportedFileAnswersWithTheSameFunctions) {
  auto trace = MustImport(kTrace);
  const std::string path = testing::TempPath("sql_functions.sqlite");
  ASSERT_TRUE(ExportTrace(*trace, "sqlite", path).ok());
  auto rows = QueryDatabaseFile(path,
                                "INCLUDE PERFETTO MODULE slices.with_context; SELECT a.name, "
                                "extract_arg(s.arg_set_id, 'args.k') AS k FROM thread_slice s "
                                "JOIN ancestor_slice(s.id) a WHERE s.id = 3");
  std::remove(path.c_str());
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ(rows.value().FormatCsv(), "name,k\nparent,1\n");
}

// N steps on each of two threads, each step holding an op holding a kernel, and every slice
// with the same argument of `stack_length` bytes (as CPU samples share their stack).
std::string GeneratedTrace(int steps, size_t stack_length) {
  const std::string stack(stack_length, 's');
  std::ostringstream json;
  json << "{\"traceEvents\": [\n";
  bool first = true;
  for (int tid = 1; tid <= 2; ++tid) {
    for (int i = 0; i < steps; ++i) {
      const long ts = static_cast<long>(i) * 100;
      const struct {
        const char* name;
        long at, dur;
      } levels[] = {{"step", ts, 100}, {"op", ts + 10, 50}, {"kernel", ts + 20, 10}};
      for (const auto& l : levels) {
        json << (first ? "" : ",\n") << "{\"ph\": \"X\", \"name\": \"" << l.name
             << "\", \"pid\": 1, \"tid\": " << tid << ", \"ts\": " << l.at << ", \"dur\": " << l.dur
             << ", \"args\": {\"stack\": \"" << stack << "\"}}";
        first = false;
      }
    }
  }
  json << "\n]}";
  return json.str();
}

constexpr int kSteps = 50000;  // 300,000 slices

TEST(SqlSpeed, SelfTimeAsJoinAndAsCorrelatedSubqueryOnManySlices) {
  auto trace = MustImport(GeneratedTrace(kSteps, 8));
  auto db = TraceDatabase::Build(*trace);
  ASSERT_TRUE(db.ok()) << db.error().message;
  const std::string want = "name,self\nkernel," + std::to_string(2L * kSteps * 10000) + "\nop," +
                           std::to_string(2L * kSteps * 40000) + "\nstep," +
                           std::to_string(2L * kSteps * 50000) + "\n";
  auto join = db.value()->Query(
      "SELECT s.name, sum(s.dur - coalesce(c.child_dur, 0)) AS self FROM slice s "
      "LEFT JOIN (SELECT parent_id, sum(dur) AS child_dur FROM slice "
      "WHERE parent_id IS NOT NULL GROUP BY parent_id) c ON c.parent_id = s.id "
      "GROUP BY s.name ORDER BY s.name");
  ASSERT_TRUE(join.ok()) << join.error().message;
  EXPECT_EQ(join.value().FormatCsv(), want);
  // Without an index on parent_id this form is quadratic: it ran for over 10 minutes on 280k
  // slices. The test's timeout is the bound.
  auto correlated = db.value()->Query(
      "SELECT name, sum(dur - coalesce((SELECT sum(c.dur) FROM slice c "
      "WHERE c.parent_id = s.id), 0)) AS self FROM slice s GROUP BY name ORDER BY name");
  ASSERT_TRUE(correlated.ok()) << correlated.error().message;
  EXPECT_EQ(correlated.value().FormatCsv(), want);
  // The same long argument is one arg set for every slice.
  auto sets = db.value()->Query(
      "SELECT count(DISTINCT arg_set_id) AS sets, (SELECT count(*) FROM args) AS arg_rows "
      "FROM slice");
  ASSERT_TRUE(sets.ok()) << sets.error().message;
  EXPECT_EQ(sets.value().FormatCsv(), "sets,arg_rows\n1,1\n");
}

TEST(SqlSpeed, ExportHoldsSharedArgumentsOnce) {
  constexpr int kSmallSteps = 5000;  // 30,000 slices
  auto trace = MustImport(GeneratedTrace(kSmallSteps, 400));
  const std::string path = testing::TempPath("sql_size.sqlite");
  ASSERT_TRUE(ExportTrace(*trace, "sqlite", path).ok());
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  const auto bytes = static_cast<long>(file.tellg());
  std::remove(path.c_str());
  // A slice costs its row (about 40 bytes: ids, times, a short name) and an entry in each of its
  // five indexes (about 20 bytes each): 150 bytes is generous. A copy of the 400-byte argument
  // per slice, as the export made before arg sets were shared, would be over 400.
  const long slices = 6L * kSmallSteps;
  EXPECT_LT(bytes, slices * 150) << bytes << " bytes for " << slices << " slices";
}

TEST(SqlDatabase, BuildCountGrowsOncePerBuild) {
  auto trace = MustImport(kTrace);
  const int64_t before = TraceDatabase::BuildCount();
  auto db = TraceDatabase::Build(*trace);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db.value()->Query("SELECT 1").ok());
  ASSERT_TRUE(db.value()->Query("SELECT 2").ok());
  EXPECT_EQ(TraceDatabase::BuildCount(), before + 1);
}

}  // namespace
}  // namespace profsh
