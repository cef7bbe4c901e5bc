// The ranks of a job in one trace: which rank a track is, the collectives matched across ranks
// with their arrival skew and waits, and the cross-rank view of rows (docs/ANALYSIS.md "Many
// ranks").
#include "engine/analysis/ranks.h"

#include <gtest/gtest.h>

#include "engine/load/rank_loader.h"
#include "test_util.h"

namespace profsh {
namespace {

TEST(Ranks, RankLabelsAndFileNames) {
  EXPECT_EQ(RankOfLabels("rank 3"), 3);
  EXPECT_EQ(RankOfLabels("GPU 0, rank 12"), 12);
  EXPECT_EQ(RankOfLabels("GPU 0"), -1);
  EXPECT_EQ(RankInFileName("/x/rank-7.Jul_15_10_52_41.1074.pt.trace.json.gz"), 7);
  EXPECT_EQ(RankInFileName("/x/worker3_rank_12.json"), 12);
}

// Two ranks, each a process labelled "rank N", calling all_reduce twice through NCCL kernels.
// Rank 1 arrives 30 µs late at the first and 10 µs early at the second.
const char kTwoRanks[] = R"json({"traceEvents": [
  {"ph": "M", "name": "process_labels", "pid": 10, "args": {"labels": "rank 0"}},
  {"ph": "M", "name": "process_labels", "pid": 11, "args": {"labels": "rank 1"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 10,
   "tid": 7, "ts": 100, "dur": 50},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 11,
   "tid": 7, "ts": 130, "dur": 20},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 10,
   "tid": 7, "ts": 300, "dur": 30},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 11,
   "tid": 7, "ts": 290, "dur": 40}
]})json";

TEST(Ranks, TracksBelongToTheirProcesssRank) {
  auto trace = testing::MustImport(kTwoRanks);
  const std::vector<int32_t> rank_of_track = RankOfTrack(*trace);
  EXPECT_EQ(RanksOf(rank_of_track), (std::vector<int32_t>{0, 1}));
  EXPECT_FALSE(DistributedRank(*trace));
}

TEST(Ranks, CollectivesMatchAcrossRanksBySequence) {
  auto trace = testing::MustImport(kTwoRanks);
  const std::vector<CollectiveCall> calls = CollectiveCalls(*trace, RankOfTrack(*trace));
  ASSERT_EQ(calls.size(), 4u);
  for (const CollectiveCall& c : calls) {
    EXPECT_TRUE(c.device);
    EXPECT_EQ(c.name, "allreduce");  // normalized: kernels and host ops match
    EXPECT_EQ(c.group, "default");
  }
  const CollectiveAnalysis a = AnalyzeCollectives(*trace);
  ASSERT_EQ(a.calls.rows.size(), 4u);
  const size_t rank = a.calls.Column("rank"), skew = a.calls.Column("arrival_skew"),
               wait = a.calls.Column("wait"), last = a.calls.Column("last"),
               seq = a.calls.Column("seq");
  ASSERT_NE(skew, SIZE_MAX);
  // Per (seq, rank): rank 1 was last at seq 0 (rank 0 waited 30 µs), rank 0 at seq 1.
  int64_t checked = 0;
  for (size_t r = 0; r < a.calls.rows.size(); ++r) {
    const int64_t s = a.calls.rows.cell(r, seq).int_value;
    const int64_t k = a.calls.rows.cell(r, rank).int_value;
    const bool is_last = a.calls.rows.cell(r, last).int_value == 1;
    if (s == 0 && k == 0) {
      EXPECT_FALSE(is_last);
      EXPECT_EQ(a.calls.rows.cell(r, wait).Format(), "30.000");
      ++checked;
    } else if (s == 0 && k == 1) {
      EXPECT_TRUE(is_last);
      EXPECT_EQ(a.calls.rows.cell(r, skew).Format(), "30.000");
      ++checked;
    } else if (s == 1 && k == 0) {
      EXPECT_TRUE(is_last);
      EXPECT_EQ(a.calls.rows.cell(r, skew).Format(), "10.000");
      ++checked;
    } else if (s == 1 && k == 1) {
      EXPECT_EQ(a.calls.rows.cell(r, wait).Format(), "10.000");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
  // Each rank arrived last once: a straggler is named, and each rank's row counts one.
  EXPECT_NE(a.straggler, -1);
  ASSERT_EQ(a.ranks.rows.size(), 2u);
  for (size_t r = 0; r < 2; ++r)
    EXPECT_EQ(a.ranks.rows.cell(r, a.ranks.Column("last_arrivals")).Format(), "1");
}

TEST(Ranks, CrossRankViewSpreadsEachNumberOverRanks) {
  AnalysisRows rows;
  rows.columns = {"name", "rank", "time"};
  rows.rows.push_back({Cell::Text("mm"), Cell::Int(0), Cell::Int(10)});
  rows.rows.push_back({Cell::Text("mm"), Cell::Int(1), Cell::Int(30)});
  rows.rows.push_back({Cell::Text("mm"), Cell::Int(2), Cell::Int(20)});
  rows.rows.push_back({Cell::Text("relu"), Cell::Int(0), Cell::Int(5)});
  const AnalysisRows view = CrossRankView(rows);
  ASSERT_EQ(view.rows.size(), 2u);
  const size_t name = view.Column("name");
  size_t mm = view.rows.text(0, name) == "mm" ? 0 : 1;
  EXPECT_EQ(view.rows.cell(mm, view.Column("time_min")).Format(), "10");
  EXPECT_EQ(view.rows.cell(mm, view.Column("time_median")).Format(), "20");
  EXPECT_EQ(view.rows.cell(mm, view.Column("time_max")).Format(), "30");
  EXPECT_EQ(view.rows.cell(mm, view.Column("time_max_rank")).Format(), "1");
}

}  // namespace
}  // namespace profsh
