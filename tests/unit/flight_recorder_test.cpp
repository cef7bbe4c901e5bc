// The flight recorder's host side: step summaries from a step's events, the history's
// percentiles, the built-in triggers and their parsing, and the ring: steps kept and dropped by
// count, seconds and bytes, dumps of [step - before, step + after] with their reason, merged
// requests, and what Finish() hands over.
#include "engine/session/flight_recorder.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace profsh {
namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kEpoch = 1700000000LL * 1000000000LL;

// One step of process 7: a "work" range of `work_us`, an operator, a kernel busy for half the
// step, and `leak` bytes allocated and not freed.
WindowTrace MakeStep(int64_t step, int64_t duration_ms, int64_t work_us = 1000, int64_t leak = 0) {
  const int64_t half_us = duration_ms * 500;
  std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "work", "pid": 7, "tid": 7, "ts": 0, "dur": )" +
                     std::to_string(work_us) + R"(},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 0, "dur": )" +
                     std::to_string(half_us) + R"(, "args": {"device": 0, "stream": 7}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7, "ts": 2, "s": "t",
     "args": {"Bytes": 4096, "Device Type": 0, "Device Id": -1}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7, "ts": 3, "s": "t",
     "args": {"Bytes": )" +
                     std::to_string(leak - 4096) +
                     R"(, "Device Type": 0, "Device Id": -1}}
  ]})";
  WindowTrace w;
  w.trace = testing::MustImport(json);
  w.info.pid = 7;
  w.info.has_steps = true;
  w.info.first_step = w.info.last_step = step;
  w.info.begin_ns = kEpoch + step * 100 * kMs;
  w.info.end_ns = w.info.begin_ns + duration_ms * kMs;
  w.trace->origin_ns = w.info.begin_ns;
  w.trace->has_origin = true;
  return w;
}

// Fires at the steps it is given, with a reason naming them.
class AtSteps final : public StepTrigger {
 public:
  explicit AtSteps(std::vector<int64_t> steps) : steps_(std::move(steps)) {}
  const std::string& spec() const override { return spec_; }
  TriggerVerdict Check(const StepSummary& s, const StepHistory&) override {
    for (int64_t x : steps_)
      if (x == s.step) return std::optional<std::string>("at " + std::to_string(x));
    return NotTriggered();
  }

 private:
  std::vector<int64_t> steps_;
  std::string spec_ = "at steps";
};

class Failing final : public StepTrigger {
 public:
  const std::string& spec() const override { return spec_; }
  TriggerVerdict Check(const StepSummary&, const StepHistory&) override {
    ++calls;
    return Error{"boom"};
  }
  int calls = 0;

 private:
  std::string spec_ = "failing";
};

TEST(StepSummary, RangesOperatorsGpuAndMemoryOfOneStep) {
  WindowTrace w = MakeStep(3, 10, 2500, 1 << 20);
  StepSummary s = SummarizeStep(*w.trace, 7, 3, w.info.begin_ns, w.info.end_ns, 1000);
  EXPECT_EQ(s.step, 3);
  EXPECT_EQ(s.duration_ns, 10 * kMs);
  ASSERT_EQ(s.ranges.size(), 1u);
  EXPECT_EQ(s.ranges[0].name, "work");
  EXPECT_EQ(s.ranges[0].total_ns, 2500000);
  EXPECT_EQ(s.RangeTime("work"), 2500000);
  EXPECT_EQ(s.RangeTime("other"), 0);
  ASSERT_EQ(s.top_operators.size(), 1u);
  EXPECT_EQ(s.top_operators[0].name, "aten::mm");
  EXPECT_TRUE(s.has_gpu);
  EXPECT_EQ(s.gpu_busy_ns, 5 * kMs);
  EXPECT_EQ(s.gpu_idle_ns, 5 * kMs);
  EXPECT_DOUBLE_EQ(s.gpu_idle_fraction, 0.5);
  EXPECT_TRUE(s.has_memory);
  EXPECT_EQ(s.memory_at_start, 1000);
  EXPECT_EQ(s.memory_peak, 1000 + (1 << 20));
  EXPECT_EQ(s.memory_growth, 1 << 20);
  EXPECT_EQ(s.memory_at_end(), 1000 + (1 << 20));
}

TEST(StepHistory, PercentilesInterpolateBetweenRanks) {
  std::deque<StepSummary> steps;
  for (int i = 100; i >= 1; --i) {
    StepSummary s;
    s.duration_ns = i;
    steps.push_back(s);
  }
  StepHistory h = MakeStepHistory(steps);
  EXPECT_EQ(h.count, 100u);
  EXPECT_EQ(h.min_ns, 1);
  EXPECT_EQ(h.max_ns, 100);
  EXPECT_DOUBLE_EQ(h.median_ns, 50.5);
  EXPECT_DOUBLE_EQ(h.p90_ns, 90.1);
  EXPECT_DOUBLE_EQ(h.p95_ns, 95.05);
  EXPECT_DOUBLE_EQ(h.mean_ns, 50.5);
  EXPECT_EQ(MakeStepHistory({}).count, 0u);
}

TEST(BuiltInTriggers, ParseTheirParametersAndRefuseBadOnes) {
  for (const char* good :
       {"slow-step", "slow-step:2", "memory-growth", "memory-growth:5%", "memory-growth:5",
        "gpu-idle", "gpu-idle:40%", "range:work>10", "range:a>b>2.5"}) {
    EXPECT_TRUE(IsBuiltInTrigger(good)) << good;
    auto t = MakeBuiltInTrigger(good);
    EXPECT_TRUE(t.ok()) << good << ": " << (t.ok() ? "" : t.error().message);
  }
  for (const char* bad : {"slow-step:x", "slow-step:-1", "slow-step:", "gpu-idle:0%", "range:>5",
                          "range:work", "range:work>ms"}) {
    auto t = MakeBuiltInTrigger(bad);
    EXPECT_FALSE(t.ok()) << bad;
  }
  EXPECT_FALSE(IsBuiltInTrigger("slow-stepper"));
  EXPECT_FALSE(IsBuiltInTrigger("step.duration > 3"));
}

StepSummary Summary(int64_t step, int64_t duration_ns) {
  StepSummary s;
  s.step = step;
  s.duration_ns = duration_ns;
  return s;
}

TEST(BuiltInTriggers, SlowStepComparesWithTheMedianOnceThereIsHistory) {
  auto t = std::move(MakeBuiltInTrigger("slow-step:2").value());
  std::deque<StepSummary> steps;
  for (int i = 0; i < 4; ++i) steps.push_back(Summary(i, 10 * kMs));
  // Too little history: no verdict, however slow.
  EXPECT_FALSE(t->Check(Summary(4, 100 * kMs), MakeStepHistory(steps)).value());
  steps.push_back(Summary(4, 10 * kMs));
  EXPECT_FALSE(t->Check(Summary(5, 20 * kMs), MakeStepHistory(steps)).value());
  auto fired = t->Check(Summary(5, 21 * kMs), MakeStepHistory(steps)).value();
  ASSERT_TRUE(fired);
  EXPECT_EQ(*fired,
            "slow-step: step 5 took 21.000 ms, 2.10x the median 10.000 ms of the 5 steps "
            "before it");
}

TEST(BuiltInTriggers, MemoryGrowthFiresOncePerRiseAboveTheHistorysLowest) {
  auto t = std::move(MakeBuiltInTrigger("memory-growth:10%").value());
  std::deque<StepSummary> steps;
  auto step = [&](int64_t n, int64_t start, int64_t growth) {
    StepSummary s = Summary(n, kMs);
    s.has_memory = true;
    s.memory_at_start = start;
    s.memory_growth = growth;
    return s;
  };
  for (int i = 0; i < 5; ++i) steps.push_back(step(i, 1000, 0));
  EXPECT_FALSE(t->Check(step(5, 1000, 100), MakeStepHistory(steps)).value());  // 10%: not more
  EXPECT_TRUE(t->Check(step(5, 1000, 101), MakeStepHistory(steps)).value());
  // Fired at 1101: the next rise is measured from there.
  EXPECT_FALSE(t->Check(step(6, 1101, 100), MakeStepHistory(steps)).value());
  EXPECT_TRUE(t->Check(step(7, 1201, 100), MakeStepHistory(steps)).value());
  // A step that shrank does not fire.
  EXPECT_FALSE(t->Check(step(8, 5000, -1), MakeStepHistory(steps)).value());
}

TEST(BuiltInTriggers, GpuIdleAndRangeTime) {
  auto idle = std::move(MakeBuiltInTrigger("gpu-idle:30%").value());
  StepSummary s = Summary(1, 10 * kMs);
  EXPECT_FALSE(idle->Check(s, {}).value());  // no device work: no verdict
  s.has_gpu = true;
  s.gpu_idle_fraction = 0.3;
  EXPECT_FALSE(idle->Check(s, {}).value());
  s.gpu_idle_fraction = 0.31;
  EXPECT_TRUE(idle->Check(s, {}).value());
  auto range = std::move(MakeBuiltInTrigger("range:data>5").value());
  s.ranges = {NamedTime{"data", 5 * kMs, 1}};
  EXPECT_FALSE(range->Check(s, {}).value());
  s.ranges = {NamedTime{"data", 5 * kMs + 1, 2}};
  auto fired = range->Check(s, {}).value();
  ASSERT_TRUE(fired);
  EXPECT_EQ(*fired, "range: 'data' took 5.000 ms in step 1 (more than 5.000 ms)");
}

TEST(FlightRecorder, KeepsTheLastStepsAndDumpsAroundATrigger) {
  FlightRecorderOptions o;
  o.steps = 10;
  FlightRecorder r(o);
  r.AddTrigger(std::make_unique<AtSteps>(std::vector<int64_t>{20}));
  std::vector<FlightDump> dumps;
  for (int64_t i = 0; i < 40; ++i) {
    for (FlightDump& d : r.AddStep(MakeStep(i, 10), 0)) {
      EXPECT_EQ(i, 22) << "handed over once step 20 + 2 is in";
      dumps.push_back(std::move(d));
    }
    EXPECT_LE(r.stats().steps_kept, 10u);
  }
  ASSERT_EQ(dumps.size(), 1u);
  const FlightDump& d = dumps[0];
  EXPECT_EQ(d.reason, "at 20");
  EXPECT_GT(d.requested_at_ns, 0) << "a triggered dump knows when it was asked for";
  EXPECT_EQ(d.steps, 8u);
  EXPECT_EQ(d.window.info.first_step, 15);
  EXPECT_EQ(d.window.info.last_step, 22);
  EXPECT_EQ(d.window.info.index, 0u);
  const Trace& t = *d.window.trace;
  EXPECT_TRUE(t.has_steps);
  EXPECT_EQ(t.first_step, 15);
  EXPECT_EQ(t.last_step, 22);
  EXPECT_EQ(t.origin_ns, kEpoch + 15 * 100 * kMs);
  size_t work = 0;
  int64_t last_work_ts = -1;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.str(t.events.name(i)) != "work") continue;
    ++work;
    last_work_ts = t.events.ts(i);
  }
  EXPECT_EQ(work, 8u);
  EXPECT_EQ(last_work_ts, 7 * 100 * kMs) << "each step keeps its place in time";
  const std::string* meta = t.FindMetadata("profsh");
  ASSERT_NE(meta, nullptr);
  EXPECT_NE(meta->find("\"reason\":\"at 20\""), std::string::npos) << *meta;
  EXPECT_NE(meta->find("\"steps\":[15,22]"), std::string::npos) << *meta;
  EXPECT_EQ(r.stats().steps_seen, 40u);
  EXPECT_EQ(r.stats().steps_dropped, 30u);
  EXPECT_EQ(r.stats().dumps, 1u);
}

TEST(FlightRecorder, MergesRequestsInsideAPendingSpanAndFinishesWithWhatThereIs) {
  FlightRecorderOptions o;
  o.steps = 3;  // fewer than before: `before` steps are kept, and the requested ones until dumped
  FlightRecorder r(o);
  r.AddTrigger(std::make_unique<AtSteps>(std::vector<int64_t>{10, 11, 30}));
  std::vector<FlightDump> dumps;
  for (int64_t i = 0; i < 32; ++i)
    for (FlightDump& d : r.AddStep(MakeStep(i, 10), 0)) dumps.push_back(std::move(d));
  EXPECT_EQ(r.stats().triggers_fired, 3u);
  EXPECT_EQ(r.stats().triggers_merged, 1u);
  ASSERT_EQ(dumps.size(), 1u);
  EXPECT_EQ(dumps[0].steps, 8u);  // 5..12, though only 4 steps are kept otherwise
  // Step 30's request needs 32, which never comes: Finish hands over 25..31.
  std::vector<FlightDump> rest = r.Finish();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].window.info.first_step, 25);
  EXPECT_EQ(rest[0].window.info.last_step, 31);
  EXPECT_EQ(rest[0].first_step, 25);
  EXPECT_EQ(rest[0].last_step, 32);
  EXPECT_EQ(rest[0].window.info.index, 1u);
}

TEST(FlightRecorder, BytesAndSecondsBoundTheRing) {
  FlightRecorderOptions by_bytes;
  by_bytes.steps = 1000;
  by_bytes.max_bytes = 1;  // less than one step: only the newest stays
  FlightRecorder r(by_bytes);
  for (int64_t i = 0; i < 5; ++i) r.AddStep(MakeStep(i, 10), 0);
  EXPECT_EQ(r.stats().steps_kept, 1u);
  EXPECT_EQ(r.stats().steps_dropped, 4u);

  FlightRecorderOptions by_time;
  by_time.seconds = 1;  // steps start every 100 ms
  FlightRecorder s(by_time);
  for (int64_t i = 0; i < 30; ++i) s.AddStep(MakeStep(i, 10), 0);
  EXPECT_EQ(s.stats().steps_kept, 10u);
  std::vector<FlightDump> d = s.Dump(0, 0, 100, "on demand");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].window.info.first_step, 20);
  EXPECT_EQ(d[0].window.info.last_step, 29);
  EXPECT_EQ(d[0].reason, "on demand");
  EXPECT_EQ(d[0].requested_at_ns, 0);
  EXPECT_TRUE(s.Dump(99, 0, 100, "no such process").empty());
}

TEST(FlightRecorder, ATriggerThatFailsIsReportedOnceAndDisabled) {
  FlightRecorder r(FlightRecorderOptions{.steps = 5});
  auto failing = std::make_unique<Failing>();
  Failing* f = failing.get();
  r.AddTrigger(std::move(failing));
  r.AddTrigger(std::make_unique<AtSteps>(std::vector<int64_t>{3}));
  std::vector<FlightDump> dumps;
  for (int64_t i = 0; i < 10; ++i)
    for (FlightDump& d : r.AddStep(MakeStep(i, 10), 0)) dumps.push_back(std::move(d));
  EXPECT_EQ(f->calls, 1);
  std::vector<std::string> notices = r.TakeNotices();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0],
            "trigger 'failing' failed at step 0 of pid 7: boom; it is disabled, the run goes on");
  EXPECT_TRUE(r.TakeNotices().empty());
  EXPECT_EQ(dumps.size(), 1u) << "the other trigger still runs";
}

TEST(FlightRecorder, StepSummariesCarryMemoryAndDropsAcrossSteps) {
  FlightRecorder r(FlightRecorderOptions{.steps = 5});
  r.AddStep(MakeStep(0, 10, 1000, 100), 3);
  EXPECT_EQ(r.last_summary()->memory_at_end(), 100);
  EXPECT_EQ(r.last_summary()->dropped, 3u);
  r.AddStep(MakeStep(1, 10, 1000, 50), 5);
  EXPECT_EQ(r.last_summary()->memory_at_start, 100);
  EXPECT_EQ(r.last_summary()->memory_at_end(), 150);
  EXPECT_EQ(r.last_summary()->dropped, 2u);
}

}  // namespace
}  // namespace profsh
