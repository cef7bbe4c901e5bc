// One rank's summary (engine/summary): what it holds of a trace, the cap on per-step top names,
// and the SQLite file it writes (docs/ANALYSIS.md "Rank summaries").
#include "engine/summary/rank_summary.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "engine/summary/summarize.h"
#include "engine/summary/summary_schema.h"
#include "engine/summary/summary_writer.h"
#include "test_util.h"

namespace profsh {
namespace {

// Rank 3 (distributedInfo), two steps; in step 1 three operators (aten::mm twice) and two
// all_reduces through record_param_comms (Seq 7 and 8, 10 and 20 floats) and c10d.
const char kRank3[] = R"json({"distributedInfo": {"rank": 3, "world_size": 4},
 "baseTimeNanoseconds": 1000000000,
 "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
  {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "CPU"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
   "ts": 100, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 105, "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 120, "dur": 30},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 155, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": 160,
   "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 161,
   "dur": 8, "args": {"Collective name": "allreduce", "Process Group Name": "0", "Seq": 7,
   "In msg nelems": 10, "Out msg nelems": 10, "dtype": "Float"}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 180,
   "dur": 8, "args": {"Collective name": "allreduce", "Process Group Name": "0", "Seq": 8,
   "In msg nelems": 20, "Out msg nelems": 20, "dtype": "BFloat16"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,
   "ts": 200, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 90, "dur": 5}
]})json";

RankSummary Summarize(const Trace& t, size_t top) {
  RankSummaryOptions o;
  o.rank = 3;
  o.rank_from = "distributedInfo";
  o.path = "rank3.json";
  o.top_operators = top;
  o.top_kernels = top;
  return ComputeRankSummary(t, o);
}

TEST(RankSummary, HoldsTheClockAnchorsAndStepsLoadRanksReads) {
  auto trace = testing::MustImport(kRank3);
  const RankSummary s = Summarize(*trace, 20);
  // Every event but the process name and labels (load_ranks writes its own).
  EXPECT_EQ(s.events, trace->events.size() - 2);
  EXPECT_TRUE(s.has_origin);
  EXPECT_EQ(s.origin_ns, trace->origin_ns);
  ASSERT_TRUE(s.first_event_ns);
  EXPECT_EQ(*s.first_event_ns, 90000);  // the aten::add before the first step
  ASSERT_TRUE(s.first_step);
  EXPECT_EQ(s.first_step->first, 1);
  EXPECT_EQ(s.first_step->second, 100000);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[1].step, 2);
  EXPECT_EQ(s.steps[1].end_ns, 250000);
  ASSERT_TRUE(s.distributed_info);
  EXPECT_NE(s.distributed_info->find("world_size"), std::string::npos);
}

TEST(RankSummary, KeepsTheCollectivesOfEverySourceWithBytesAndStep) {
  auto trace = testing::MustImport(kRank3);
  const RankSummary s = Summarize(*trace, 20);
  std::map<std::string, std::vector<const SummaryCollective*>> by_source;
  for (const SummaryCollective& c : s.collectives)
    by_source[CollectiveSourceName(c.source)].push_back(&c);
  ASSERT_EQ(by_source["param_comms"].size(), 2u);
  ASSERT_EQ(by_source["dispatcher_op"].size(), 1u);
  const SummaryCollective& first = *by_source["param_comms"][0];
  EXPECT_EQ(first.call.rank, 3);
  EXPECT_EQ(first.call.group, "0");
  EXPECT_EQ(first.call.name, "allreduce");
  EXPECT_EQ(first.call.seq, 7);
  EXPECT_EQ(first.call.ts, 161000);
  EXPECT_EQ(first.call.end, 169000);
  EXPECT_EQ(first.in_bytes, 40);                          // 10 floats
  EXPECT_EQ(by_source["param_comms"][1]->out_bytes, 40);  // 20 bfloat16
  EXPECT_EQ(first.step, 1);
  // The dispatcher's op carries no message arguments: no bytes rather than a guess.
  EXPECT_FALSE(by_source["dispatcher_op"][0]->in_bytes);
  // The calls CollectiveCalls reads for the rank are those of its best source.
  const std::vector<CollectiveCall> best =
      CollectiveCalls(*trace, std::vector<int32_t>(trace->tracks.size(), 3));
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[1].seq, by_source["param_comms"][1]->call.seq);
}

TEST(RankSummary, AnUnknownDtypeGivesNoBytes) {
  auto trace = testing::MustImport(R"json({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 1,
   "dur": 8, "args": {"Collective name": "allreduce", "Seq": 0, "In msg nelems": 10,
   "dtype": "Float9000"}}]})json");
  const RankSummary s = Summarize(*trace, 20);
  ASSERT_EQ(s.collectives.size(), 1u);
  EXPECT_FALSE(s.collectives[0].in_bytes);
  EXPECT_FALSE(s.collectives[0].out_bytes);  // no "Out msg nelems"
  EXPECT_FALSE(s.collectives[0].step);       // no step holds it
}

TEST(RankSummary, CapsTheTopNamesOfEachStepAndCountsThemAll) {
  auto trace = testing::MustImport(kRank3);
  const RankSummary all = Summarize(*trace, 20);
  std::vector<const SummaryTopEntry*> step1;
  for (const SummaryTopEntry& e : all.step_operators)
    if (e.step == 1) step1.push_back(&e);
  ASSERT_GE(step1.size(), 3u);
  EXPECT_EQ(step1[0]->name, "aten::mm");
  EXPECT_EQ(step1[0]->count, 2);
  EXPECT_DOUBLE_EQ(step1[0]->total_us, 40);
  EXPECT_DOUBLE_EQ(step1[0]->max_us, 30);
  const RankSummary capped = Summarize(*trace, 1);
  size_t in_step1 = 0;
  for (const SummaryTopEntry& e : capped.step_operators) in_step1 += e.step == 1;
  EXPECT_EQ(in_step1, 1u);
  EXPECT_EQ(capped.steps[0].operators, static_cast<int64_t>(step1.size()));  // before the cap
}

struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path) {
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  }
  ~Db() { sqlite3_close(db); }
  std::vector<std::vector<std::string>> Rows(const std::string& sql) const {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* t = sqlite3_column_text(st, c);
        row.emplace_back(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out.push_back(row);
    }
    sqlite3_finalize(st);
    return out;
  }
};

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("profsh-summary-" + std::to_string(getpid()) + "-" + name))
      .string();
}

TEST(RankSummary, FileHasTheDeclaredTablesAndKeepsEachCellsKind) {
  auto trace = testing::MustImport(kRank3);
  const std::string path = TempPath("rank3.sqlite");
  ASSERT_TRUE(WriteRankSummary(Summarize(*trace, 20), path).ok());
  Db db(path);
  for (const SummaryTable& t : SummaryTables()) {
    auto columns = db.Rows("SELECT name FROM pragma_table_info('" + std::string(t.name) + "')");
    ASSERT_EQ(columns.size(), t.columns.size()) << t.name;
    for (size_t c = 0; c < columns.size(); ++c) EXPECT_EQ(columns[c][0], t.columns[c].name);
  }
  EXPECT_EQ(db.Rows("SELECT value FROM meta WHERE key = 'schema_version'")[0][0],
            std::to_string(kSummarySchemaVersion));
  EXPECT_EQ(
      db.Rows("SELECT rank, rank_from, first_event_ns, first_step, first_step_ns FROM rank")[0],
      (std::vector<std::string>{"3", "distributedInfo", "90000", "1", "100000"}));
  EXPECT_EQ(db.Rows("SELECT count(*) FROM collectives WHERE source = 'param_comms'")[0][0], "2");
  // step_breakdown rows: the step is text, the times reals; no device work, so the temporal
  // breakdown is a note.
  auto kinds = db.Rows(
      "SELECT DISTINCT typeof(c.value) FROM analysis_cells c JOIN analyses a ON a.id = c.analysis "
      "WHERE a.name = 'step_breakdown' ORDER BY 1");
  std::set<std::string> kind_set;
  for (auto& k : kinds) kind_set.insert(k[0]);
  EXPECT_TRUE(kind_set.count("text"));
  EXPECT_TRUE(kind_set.count("real") || kind_set.count("integer"));
  EXPECT_EQ(db.Rows("SELECT count(*) FROM analysis_notes n JOIN analyses a ON a.id = n.analysis "
                    "WHERE a.name = 'temporal_breakdown'")[0][0],
            "1");
  std::filesystem::remove(path);
}

TEST(RankSummary, RankComesFromTheTraceThenTheFileNameThenTheOption) {
  auto named = testing::MustImport(kRank3);
  EXPECT_EQ(SummaryRank(*named, "rank-9.json", 5).value().first, 3);
  auto unnamed = testing::MustImport(R"({"traceEvents": []})");
  auto from_name = SummaryRank(*unnamed, "/x/job_rank-9.json", 5);
  EXPECT_EQ(from_name.value(), (std::pair<int32_t, std::string>{9, "file name"}));
  EXPECT_EQ(SummaryRank(*unnamed, "/x/job.json", 5).value().second, "option");
  auto none = SummaryRank(*unnamed, "/x/job.json", std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("/x/job.json"), std::string::npos);
  EXPECT_NE(none.error().message.find("--rank N"), std::string::npos);
}

TEST(RankSummary, AFailedWriteLeavesNoFileAndNamesThePath) {
  auto trace = testing::MustImport(kRank3);
  const std::string path = TempPath("no-such-folder/rank3.sqlite");
  const Status s = WriteRankSummary(Summarize(*trace, 20), path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no-such-folder"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace profsh
