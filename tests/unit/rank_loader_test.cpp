// Loading every rank of a job into one Trace: ranks from the trace or the file name, processes
// renamed and labelled by rank, and the clocks aligned by each rule (docs/ANALYSIS.md "Many
// ranks").
#include "engine/load/rank_loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "engine/analysis/ranks.h"

namespace profsh {
namespace {

// A folder of rank files, removed at the end.
struct JobFolder {
  std::string path;
  JobFolder() {
    char name[] = "/tmp/profsh_ranks_XXXXXX";
    path = mkdtemp(name);
  }
  ~JobFolder() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string Write(const std::string& file, const std::string& json) {
    const std::string p = path + "/" + file;
    std::ofstream(p) << json;
    return p;
  }
};

// One rank: a ProfilerStep at `step_ts` and an all_reduce kernel ending at `collective_end`, on a
// clock whose zero is `base` µs (Kineto's baseTimeNanoseconds).
std::string Rank(int64_t base_us, int64_t step_ts, int64_t collective_end) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"baseTimeNanoseconds\": %lld, \"traceEvents\": ["
           "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", "
           "\"pid\": 5, \"tid\": 5, \"ts\": %lld, \"dur\": 500},"
           "{\"ph\": \"X\", \"cat\": \"kernel\", "
           "\"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\", "
           "\"pid\": 0, \"tid\": 7, \"ts\": %lld, \"dur\": 50}]}",
           static_cast<long long>(base_us * 1000), static_cast<long long>(step_ts),
           static_cast<long long>(collective_end - 50));
  return json;
}

TEST(RankLoader, RanksComeFromFileNamesAndAreLabelled) {
  JobFolder job;
  job.Write("worker-rank-1.json", Rank(0, 100, 400));
  job.Write("worker-rank-0.json", Rank(0, 100, 400));
  auto paths = ResolveRankPaths(job.path);
  ASSERT_TRUE(paths.ok());
  ASSERT_EQ(paths.value().size(), 2u);
  RankLoadOptions options;
  options.paths = paths.value();
  options.align = RankAlignment::kAbsolute;
  auto loaded = LoadRanks(options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded.value().ranks.size(), 2u);
  EXPECT_EQ(loaded.value().ranks[0].rank, 0);
  EXPECT_NE(loaded.value().ranks[0].path.find("rank-0"), std::string::npos);
  const Trace& t = *loaded.value().trace;
  EXPECT_EQ(RanksOf(RankOfTrack(t)), (std::vector<int32_t>{0, 1}));
}

TEST(RankLoader, AlignmentRulesMoveEachRanksClock) {
  JobFolder job;
  // Rank 1's trace begins 1000 µs after rank 0's (baseTimeNanoseconds); in its own trace its
  // step starts 20 µs later than rank 0's, and its collective ends 40 µs later.
  job.Write("rank0.json", Rank(0, 100, 400));
  job.Write("rank1.json", Rank(1000, 120, 440));
  auto offset_of_rank1 = [&](RankAlignment align) {
    RankLoadOptions options;
    options.paths = ResolveRankPaths(job.path).value();
    options.align = align;
    auto loaded = LoadRanks(options);
    EXPECT_TRUE(loaded.ok());
    const auto& r = loaded.value().ranks;
    return (r[1].offset_ns - r[0].offset_ns) / 1000;  // µs
  };
  // "abs": the times as recorded, on the common clock the bases give.
  EXPECT_EQ(offset_of_rank1(RankAlignment::kAbsolute), 0);
  EXPECT_EQ(offset_of_rank1(RankAlignment::kStep), -1020);
  EXPECT_EQ(offset_of_rank1(RankAlignment::kCollective), -1040);
  // "min": every rank starts at the same instant: its first event is its step.
  EXPECT_EQ(offset_of_rank1(RankAlignment::kMin), -1020);
}

TEST(RankLoader, AMissingRankIsAnErrorUnlessAllowed) {
  JobFolder job;
  job.Write("rank0.json", Rank(0, 100, 400));
  job.Write("rank2.json", Rank(0, 100, 400));
  RankLoadOptions options;
  options.paths = ResolveRankPaths(job.path).value();
  auto loaded = LoadRanks(options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("1"), std::string::npos) << loaded.error().message;
  options.allow_missing = true;
  EXPECT_TRUE(LoadRanks(options).ok());
}

TEST(RankLoader, APatternThatMatchesNothingIsNamed) {
  auto paths = ResolveRankPaths("/nonexistent/profsh/*.json");
  ASSERT_FALSE(paths.ok());
  EXPECT_NE(paths.error().message.find("/nonexistent/profsh/*.json"), std::string::npos);
  EXPECT_FALSE(ParseRankAlignment("median").ok());
  EXPECT_EQ(ParseRankAlignment("collective").value(), RankAlignment::kCollective);
}

}  // namespace
}  // namespace profsh
