// The watchdog's parts without a workload: when it fires (once per quiet spell of a process that
// stepped before), collectives' sequence numbers (an NVTX payload, else counted) and the last
// eight kept, the report's text and JSON, and the flight recorder's dumps of one time span in
// every process, with a hang's open ranges as events.
#include <gtest/gtest.h>

#include <string>

#include "engine/decoding/hang_watch.h"
#include "engine/session/flight_recorder.h"
#include "engine/session/hang_trace.h"
#include "engine/session/watchdog.h"
#include "test_util.h"

namespace profsh {
namespace {

constexpr int64_t kS = 1000000000;
constexpr int64_t kMs = 1000000;
constexpr int64_t kEpoch = 1700000000LL * kS;

ProcessHangState Stepping(int64_t pid, int64_t last_step, int64_t last_step_ns) {
  ProcessHangState p;
  p.pid = pid;
  p.command = "train.py";
  p.steps = static_cast<uint64_t>(last_step + 1);
  p.last_step = last_step;
  p.last_step_ns = last_step_ns;
  return p;
}

TEST(Watchdog, FiresOncePerQuietSpellOfAProcessThatStepped) {
  Watchdog dog(1 * kS);
  ProcessHangState idle;  // never stepped: a launcher shell
  idle.pid = 2;
  EXPECT_FALSE(dog.Check({Stepping(1, 5, kEpoch), idle}, kEpoch + kS / 2));
  auto hang = dog.Check({Stepping(1, 5, kEpoch), idle}, kEpoch + 2 * kS);
  ASSERT_TRUE(hang);
  EXPECT_EQ(hang->pid, 1);
  EXPECT_EQ(hang->at_ns, kEpoch + 2 * kS);
  EXPECT_EQ(hang->reason, "watchdog: pid 1 began no step for 2.0 s (the last: step 5)");
  EXPECT_EQ(hang->processes.size(), 2u);  // every process is reported
  EXPECT_FALSE(dog.Check({Stepping(1, 5, kEpoch), idle}, kEpoch + 3 * kS));  // the same spell
  // It stepped again, then went quiet again: a new spell.
  EXPECT_FALSE(dog.Check({Stepping(1, 6, kEpoch + 3 * kS)}, kEpoch + 3 * kS + kS / 2));
  auto again = dog.Check({Stepping(1, 6, kEpoch + 3 * kS)}, kEpoch + 5 * kS);
  ASSERT_TRUE(again);
  EXPECT_NE(again->reason.find("step 6"), std::string::npos);
}

TEST(Watchdog, NamesTheProcessQuietLongest) {
  Watchdog dog(1 * kS);
  auto hang = dog.Check({Stepping(1, 9, kEpoch + kS), Stepping(2, 4, kEpoch)}, kEpoch + 3 * kS);
  ASSERT_TRUE(hang);
  EXPECT_EQ(hang->pid, 2);
}

stream::StreamEvent Begin(uint64_t ticks, bool payload, int64_t value) {
  stream::StreamEvent e;
  e.ticks = ticks;
  if (payload) {
    e.attrs.flags = stream::kAttrPayload;
    e.attrs.payload_type = stream::kPayloadI64;
    e.attrs.payload = static_cast<uint64_t>(value);
  }
  return e;
}

TEST(CollectiveLog, SequenceNumbersRecordedOrCountedAndTheLastEightKept) {
  CollectiveLog log;
  log.Entered(5, "nccl:all_reduce", Begin(1, true, 41));
  log.Entered(5, "nccl:broadcast", Begin(2, false, 0));
  log.Entered(5, "nccl:broadcast", Begin(3, false, 0));
  ASSERT_EQ(log.last().size(), 3u);
  EXPECT_EQ(log.last()[0].seq, 41);
  EXPECT_TRUE(log.last()[0].seq_recorded);
  EXPECT_EQ(log.last()[1].seq, 0);  // counted per name, from 0
  EXPECT_EQ(log.last()[2].seq, 1);
  EXPECT_FALSE(log.last()[2].seq_recorded);
  for (int i = 0; i < 10; ++i) log.Entered(6, "c10d::allreduce_", Begin(10 + i, false, 0));
  ASSERT_EQ(log.last().size(), CollectiveLog::kKept);
  EXPECT_EQ(log.last().front().seq, 2);
  EXPECT_EQ(log.last().back().seq, 9);
}

ProcessHangState Hung(int64_t pid) {
  ProcessHangState p = Stepping(pid, 30, kEpoch);
  p.open = {{11, "comm", "nccl:all_reduce", "range", kEpoch + 2 * kMs},
            {10, "", "wait_collective", "range", kEpoch + kMs},
            {10, "", "step", "range", kEpoch}};
  p.collectives = {{11, "nccl:all_reduce", 29, true, kEpoch - 5 * kMs, false},
                   {11, "nccl:all_reduce", 30, true, kEpoch + 2 * kMs, true}};
  p.samples = {{11, kEpoch + kS, "main;Run;BlockedInCollective"}};
  return p;
}

TEST(HangReport, TextAndJsonNameTheOpenRangesCollectivesAndSamples) {
  const std::vector<ProcessHangState> ps = {Hung(10)};
  const std::string text = HangReportText(ps, kEpoch + 2 * kS);
  EXPECT_NE(text.find("pid 10 (train.py): step 30 began 2.0 s ago"), std::string::npos) << text;
  EXPECT_NE(text.find("thread 11 (comm), open ranges, innermost first:\n    range nccl:all_reduce"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("nccl:all_reduce seq 30 on thread 11, still open after 2.0 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("BlockedInCollective"), std::string::npos) << text;
  const std::string json = HangReportJson(ps, kEpoch + 2 * kS);
  EXPECT_NE(json.find("\"name\": \"wait_collective\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"seq\": 30, \"seq_recorded\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"stack\": \"main;Run;BlockedInCollective\""), std::string::npos) << json;
}

// One step of `pid`: a "work" range of 1 ms.
WindowTrace Step(int64_t pid, int64_t step, int64_t begin_ns) {
  std::string json =
      R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "work", "pid": )" +
      std::to_string(pid) + R"(, "tid": 1, "ts": 0, "dur": 1000}]})";
  WindowTrace w;
  w.trace = testing::MustImport(json);
  w.info.pid = pid;
  w.info.has_steps = true;
  w.info.first_step = w.info.last_step = step;
  w.info.begin_ns = begin_ns;
  w.info.end_ns = begin_ns + 10 * kMs;
  w.trace->origin_ns = begin_ns;
  w.trace->has_origin = true;
  return w;
}

TEST(FlightRecorderSpan, EveryProcessDumpsTheSameSpanAndAHangAddsItsOpenRanges) {
  FlightRecorderOptions o;
  o.steps = 10;
  FlightRecorder r(o);
  for (int64_t s = 0; s < 5; ++s) {
    r.AddStep(Step(7, s, kEpoch + s * 10 * kMs), 0);
    r.AddStep(Step(8, s + 100, kEpoch + s * 10 * kMs + 3 * kMs), 0);  // other numbers, offset
  }
  auto kept = r.KeptSpan(7);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->first, kEpoch);
  EXPECT_EQ(kept->second, kEpoch + 50 * kMs);
  EXPECT_EQ(r.KeptSpan(0)->second, kEpoch + 53 * kMs);
  // Steps 2-3 of pid 7's clock: pid 8's steps overlapping it are 101-103.
  auto dumps = r.DumpSpan(kEpoch + 20 * kMs, kEpoch + 40 * kMs, "asked");
  ASSERT_EQ(dumps.size(), 2u);
  EXPECT_EQ(dumps[0].window.info.pid, 7);
  EXPECT_EQ(dumps[0].window.info.first_step, 1);  // step 1 ends at the span's start
  EXPECT_EQ(dumps[0].window.info.last_step, 4);
  EXPECT_EQ(dumps[1].window.info.first_step, 101);
  EXPECT_EQ(dumps[1].window.info.last_step, 103);
  // (Metadata is kept minified.)
  const std::string span = "\"span\":[" + std::to_string(kEpoch + 20 * kMs) + "," +
                           std::to_string(kEpoch + 40 * kMs) + "]";
  for (const FlightDump& d : dumps) {
    const std::string* meta = d.window.trace->FindMetadata("profsh");
    ASSERT_NE(meta, nullptr);
    EXPECT_NE(meta->find(span), std::string::npos) << *meta;
  }
  EXPECT_EQ(r.DumpSpan(kEpoch + 20 * kMs, kEpoch + 40 * kMs, "trigger", nullptr, 7).size(), 1u);

  // A hang: pid 9 kept no step, its open ranges are dumped all the same.
  HangFinding hang;
  hang.pid = 9;
  hang.at_ns = kEpoch + 60 * kMs;
  hang.reason = "watchdog: test";
  hang.processes = {Hung(9)};
  auto hung = r.DumpSpan(kEpoch, hang.at_ns, hang.reason, &hang);
  ASSERT_EQ(hung.size(), 3u);
  const Trace& t = *hung[2].window.trace;
  EXPECT_EQ(hung[2].window.info.pid, 9);
  EXPECT_EQ(t.events.size(), 3u);
  bool blocked = false;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.str(t.events.name(i)) == "nccl:all_reduce") {
      blocked = true;
      EXPECT_EQ(t.origin_ns + t.events.ts(i), kEpoch + 2 * kMs);
      EXPECT_EQ(t.events.dur(i), 58 * kMs);
    }
  }
  EXPECT_TRUE(blocked);
  const std::string* meta = t.FindMetadata("profsh");
  ASSERT_NE(meta, nullptr);
  EXPECT_NE(meta->find("\"hang\":{"), std::string::npos) << *meta;
}

}  // namespace
}  // namespace profsh
