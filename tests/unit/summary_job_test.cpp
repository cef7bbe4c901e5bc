// The reduce over rank summaries (engine/summary/summary_job.h, summary_reader.h): the alignment
// from anchors, a written summary read back, and the slowest and drifting ranks' definitions
// (docs/ANALYSIS.md "The reduce over rank summaries").
#include "engine/summary/summary_job.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include "engine/summary/summary_threads.h"
#include "engine/summary/summary_writer.h"
#include "test_util.h"

namespace profsh {
namespace {

RankAnchors Anchors(int32_t rank, int64_t first, std::map<int64_t, int64_t> steps) {
  RankAnchors a;
  a.rank = rank;
  a.first_event = first;
  a.step_starts = std::move(steps);
  return a;
}

CollectiveCall Call(int32_t rank, int64_t seq, int64_t ts, int64_t end) {
  return CollectiveCall{rank, "0", "allreduce", seq, ts, end, true, 0};
}

TEST(SummaryJob, AlignmentFromAnchorsAlone) {
  // Rank 1's clock runs 1000 ns ahead; its step 2 starts 20 ns later than rank 0's beside that.
  const std::vector<RankAnchors> ranks = {Anchors(0, 100, {{1, 150}, {2, 300}}),
                                          Anchors(1, 1100, {{2, 1320}, {3, 1500}})};
  const std::vector<CollectiveCall> calls = {Call(0, 0, 200, 260), Call(1, 0, 1230, 1250),
                                             Call(0, 1, 400, 410), Call(1, 1, 1400, 1430)};
  EXPECT_EQ(AlignmentOffsets(RankAlignment::kAbsolute, ranks, calls).value().at(1), 0);
  EXPECT_EQ(AlignmentOffsets(RankAlignment::kMin, ranks, calls).value().at(1), -1000);
  // The first step both ranks have is 2 (rank 0's step 1 is not on rank 1).
  EXPECT_EQ(AlignmentOffsets(RankAlignment::kStep, ranks, calls).value().at(1), -1020);
  // Ends differ by -990 and -1020: the median of the two.
  EXPECT_EQ(AlignmentOffsets(RankAlignment::kCollective, ranks, calls).value().at(1), -1005);
  const std::vector<RankAnchors> no_common = {Anchors(0, 0, {{1, 0}}), Anchors(1, 0, {{2, 0}})};
  EXPECT_FALSE(AlignmentOffsets(RankAlignment::kStep, no_common, calls).ok());
  EXPECT_FALSE(AlignmentOffsets(RankAlignment::kCollective, ranks, {}).ok());
  const ResidualSkew left = ResidualCollectiveSkew(calls, 2);
  EXPECT_EQ(left.matched, 2u);
  EXPECT_DOUBLE_EQ(left.max_us, 1.020);
}

// A summary of `rank` with the step durations given (µs), steps numbered from 0, and one
// all-reduce per step.
RankSummary Made(int32_t rank, const std::vector<int64_t>& step_us) {
  RankSummary s;
  s.options.rank = rank;
  s.options.path = "rank-" + std::to_string(rank) + ".json";
  s.format = "kineto";
  s.events = 10;
  s.first_event_ns = 0;
  int64_t t = 0;
  for (size_t k = 0; k < step_us.size(); ++k) {
    s.steps.push_back(SummaryStep{static_cast<int64_t>(k), t, t + step_us[k] * 1000, 1, 1});
    s.collectives.push_back(SummaryCollective{CollectiveSource::kDeviceKernel,
                                              Call(rank, static_cast<int64_t>(k), t + 10, t + 20),
                                              std::nullopt, std::nullopt, static_cast<int64_t>(k)});
    t += step_us[k] * 1000 + 5000;
  }
  s.analyses.emplace_back("comm_comp_overlap", AnalysisRows{});
  return s;
}

// The summaries' folder goes with the job.
struct Job {
  std::filesystem::path dir;
  SummaryJob job;
  Job() = default;
  Job(Job&&) = default;
  ~Job() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

Job WriteAndReduce(const std::vector<RankSummary>& ranks, const std::string& name) {
  Job out;
  out.dir = testing::TempPath(name);
  std::filesystem::remove_all(out.dir);
  std::filesystem::create_directories(out.dir);
  SummaryJobOptions options;
  for (const RankSummary& s : ranks) {
    const std::string path =
        (out.dir / ("rank-" + std::to_string(s.options.rank) + ".summary.sqlite")).string();
    EXPECT_TRUE(WriteRankSummary(s, path).ok());
    options.paths.push_back(path);
  }
  auto job = LoadSummaryJob(options);
  EXPECT_TRUE(job.ok()) << job.error().message;
  if (job.ok()) out.job = std::move(job.value());
  return out;
}

TEST(SummaryJob, ReadsBackWhatWasWritten) {
  const RankSummary s = Made(2, {100, 110});
  const std::string path = testing::TempPath("one.summary.sqlite");
  ASSERT_TRUE(WriteRankSummary(s, path).ok());
  auto read = ReadRankSummary(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_TRUE(read->unavailable.empty());
  const RankSummary& r = read->summary;
  EXPECT_EQ(r.options.rank, 2);
  EXPECT_EQ(r.events, 10u);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[1].end_ns - r.steps[1].start_ns, 110000);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[1].call.seq, 1);
  EXPECT_EQ(r.collectives[1].source, CollectiveSource::kDeviceKernel);
  EXPECT_EQ(r.collectives[1].step, 1);
  std::filesystem::remove(path);
}

TEST(SummaryJob, SlowestRankPerStepAndTies) {
  Job j = WriteAndReduce(
      {Made(0, {100, 100, 100}), Made(1, {100, 130, 100}), Made(2, {100, 100, 120})}, "slowest");
  auto rows = SlowestRanksPerStep(j.job);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->rows.size(), 3u);
  const size_t slowest = rows->Column("slowest_rank"), excess = rows->Column("excess");
  EXPECT_EQ(rows->rows.cell(0, slowest).int_value, 0);  // a tie: the lowest rank
  EXPECT_EQ(rows->rows.cell(1, slowest).int_value, 1);
  EXPECT_DOUBLE_EQ(rows->rows.cell(1, excess).double_value, 30);
  EXPECT_EQ(rows->rows.cell(2, slowest).int_value, 2);
}

TEST(SummaryJob, DriftIsASlopeOutOfLineWithTheOthers) {
  // Every rank slows 10 µs a step (no drift); rank 3 slows 20 µs a step: over 4 steps it moves
  // 30 µs from the others, over 5 % of the median step (~125 µs).
  std::vector<RankSummary> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    const int64_t extra = r == 3 ? 20 : 10;
    ranks.push_back(Made(r, {100, 100 + extra, 100 + 2 * extra, 100 + 3 * extra, 100 + 4 * extra}));
  }
  Job j = WriteAndReduce(ranks, "drift");
  auto rows = DriftingRanks(j.job);
  ASSERT_TRUE(rows.ok());
  const size_t rank = rows->Column("rank"), drifting = rows->Column("drifting"),
               slope = rows->Column("slope"), drift = rows->Column("drift");
  EXPECT_EQ(rows->rows.cell(0, rank).int_value, 3);
  EXPECT_EQ(rows->rows.cell(0, drifting).int_value, 1);
  EXPECT_DOUBLE_EQ(rows->rows.cell(0, slope).double_value, 20);
  EXPECT_DOUBLE_EQ(rows->rows.cell(0, drift).double_value, 10);
  for (size_t i = 1; i < rows->rows.size(); ++i)
    EXPECT_EQ(rows->rows.cell(i, drifting).int_value, 0);
  // A small wobble stays under the threshold: 1 µs a step over 4 steps is 4 µs of ~100.
  Job calm = WriteAndReduce({Made(0, {100, 100, 100, 100, 100}), Made(1, {100, 101, 102, 103, 104}),
                             Made(2, {100, 100, 100, 100, 100})},
                            "calm");
  auto calm_rows = DriftingRanks(calm.job);
  ASSERT_TRUE(calm_rows.ok());
  for (size_t i = 0; i < calm_rows->rows.size(); ++i)
    EXPECT_EQ(calm_rows->rows.cell(i, calm_rows->Column("drifting")).int_value, 0);
}

TEST(SummaryJob, WhatASummaryLacksIsNamedWithHowToGetIt) {
  Job j = WriteAndReduce({Made(0, {100}), Made(1, {100})}, "lacking");
  auto missing = JobAnalysis(j.job, "temporal_breakdown");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("'temporal_breakdown'"), std::string::npos);
  EXPECT_NE(missing.error().message.find("profsh summarize"), std::string::npos);
  auto present = JobAnalysis(j.job, "comm_comp_overlap");
  EXPECT_TRUE(present.ok());
  // No steps anywhere: the step analyses say why.
  Job stepless = WriteAndReduce({Made(0, {}), Made(1, {})}, "stepless");
  auto slow = SlowestRanksPerStep(stepless.job);
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.error().message.find("prof.step()"), std::string::npos);
  // A table dropped from one file: the error names that file and the table.
  const std::string path = (j.dir / "rank-1.summary.sqlite").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE collectives", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  SummaryJobOptions options;
  options.paths = {(j.dir / "rank-0.summary.sqlite").string(), path};
  auto job = LoadSummaryJob(options);
  ASSERT_TRUE(job.ok());
  auto calls = JobCollectives(job.value());
  ASSERT_FALSE(calls.ok());
  EXPECT_NE(calls.error().message.find(path), std::string::npos);
  EXPECT_NE(calls.error().message.find("no table collectives"), std::string::npos);
}

// A process out of threads: std::thread throws std::system_error. The threads already started
// are joined (a joinable std::thread destroyed would end the process) and the error is returned.
TEST(SummaryJob, AThreadThatCannotStartIsAnError) {
  constexpr size_t kFiles = 200;
  std::vector<std::atomic<int>> calls(kFiles);
  int started = 0;
  const StartThread third_fails = [&](std::function<void()> body) {
    if (started == 2) throw std::system_error(EAGAIN, std::generic_category(), "pthread_create");
    ++started;
    return std::thread(std::move(body));
  };
  const Status s = ForEachFile(
      kFiles, [&](size_t k) { calls[k]++; }, 8, third_fails);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot start a thread to read 200 summaries (2 running)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(std::strerror(EAGAIN)), std::string::npos) << s.message();
  for (size_t k = 0; k < kFiles; ++k) EXPECT_LE(calls[k].load(), 1) << k;

  // The first thread failing: nothing is done, the error returned.
  const StartThread none = [](std::function<void()>) -> std::thread {
    throw std::system_error(EAGAIN, std::generic_category(), "pthread_create");
  };
  std::atomic<size_t> done{0};
  EXPECT_FALSE(ForEachFile(
                   kFiles, [&](size_t) { ++done; }, 8, none)
                   .ok());
  EXPECT_EQ(done.load(), 0u);
  // Threads to spare: every item once.
  const Status all = ForEachFile(kFiles, [&](size_t k) { calls[k] = 7; });
  ASSERT_TRUE(all.ok()) << all.message();
  for (size_t k = 0; k < kFiles; ++k) EXPECT_EQ(calls[k].load(), 7) << k;
}

}  // namespace
}  // namespace profsh
