#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "engine/exporters/exporter.h"
#include "engine/load/trace_loader.h"
#include "engine/trace/trace.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

constexpr int64_t kTenSeconds = 10'000'000'000;

TEST(EventTable, EventsWithTheSameFieldsShareOneTemplate) {
  EventTable ev;
  for (int i = 0; i < 1000; ++i) ev.Append(i * 10, 5, 7, 0, ArgRef{}, 'X', 1);
  ev.Append(20000, 5, 8, 0, ArgRef{}, 'X', 1);
  ev.Append(20010, 5, 7, 1, ArgRef{}, 'X', 1);
  ev.Append(20020, 5, 7, 0, ArgRef{3, 0}, 'X', 1);
  ev.Append(20030, 5, 7, 0, ArgRef{}, 'i', 1);
  EXPECT_EQ(ev.size(), 1004u);
  EXPECT_EQ(ev.templates().size(), 5u);
  EXPECT_EQ(ev.name(1000), 8u);
  EXPECT_EQ(ev.track(1001), 1u);
  EXPECT_EQ(ev.args(1002).schema(), 2u);
  EXPECT_TRUE(ev.args(999).empty());
  EXPECT_EQ(ev.phase(1003), 'i');
  EXPECT_EQ(ev.category(1003), 1u);
}

TEST(EventTable, LongDurationsSurviveSettersAndCompaction) {
  EventTable ev;
  ev.Append(0, kTenSeconds, 1, 0, ArgRef{}, 'X', 0);
  ev.Append(5, 3, 1, 0, ArgRef{}, 'X', 0);
  ev.Append(6, UINT32_MAX, 1, 0, ArgRef{}, 'X', 0);  // the escape value itself
  ev.Append(7, 1, 1, 0, ArgRef{}, 'B', 0);
  EXPECT_EQ(ev.dur(0), kTenSeconds);
  EXPECT_EQ(ev.dur(1), 3);
  EXPECT_EQ(ev.dur(2), int64_t{UINT32_MAX});
  EXPECT_EQ(ev.end(0), kTenSeconds);
  ev.SetDurations({LongDuration{3, 2 * kTenSeconds}});
  ev.SetPhase(3, 'X');
  ev.AddFlags(3, kFlagUnterminated);
  ev.SetDurations({LongDuration{2, 4}});  // long to short drops the side entry
  EXPECT_EQ(ev.dur(3), 2 * kTenSeconds);
  EXPECT_EQ(ev.phase(3), 'X');
  EXPECT_EQ(ev.flags(3), kFlagUnterminated);
  EXPECT_EQ(ev.dur(2), 4);
  EXPECT_EQ(ev.long_durations().size(), 2u);
  ev.Compact({false, true, true, false});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev.dur(0), kTenSeconds);
  EXPECT_EQ(ev.dur(1), 2 * kTenSeconds);
  EXPECT_EQ(ev.ts(1), 7);
}

TEST(EventTable, DurationsSetTogetherStayInOrder) {
  EventTable ev;
  for (int i = 0; i < 8; ++i)
    ev.Append(i, i == 2 || i == 5 ? kTenSeconds : 1, 1, 0, ArgRef{}, 'X', 0);
  // In the order B/E matching produces them: not by event.
  ev.SetDurations({LongDuration{7, 3 * kTenSeconds}, LongDuration{5, 4},
                   LongDuration{0, 2 * kTenSeconds}, LongDuration{2, 5 * kTenSeconds},
                   LongDuration{4, 6}});
  EXPECT_EQ(ev.dur(0), 2 * kTenSeconds);
  EXPECT_EQ(ev.dur(2), 5 * kTenSeconds);
  EXPECT_EQ(ev.dur(4), 6);
  EXPECT_EQ(ev.dur(5), 4);
  EXPECT_EQ(ev.dur(7), 3 * kTenSeconds);
  ASSERT_EQ(ev.long_durations().size(), 3u);
  EXPECT_EQ(ev.long_durations()[0].event, 0u);
  EXPECT_EQ(ev.long_durations()[1].event, 2u);
  EXPECT_EQ(ev.long_durations()[2].event, 7u);
}

TEST(EventTable, ManyLongBeginEndPairsOnTwoThreads) {
  // Ends match the latest begin first, so long durations are found out of event order.
  std::string json = "{\"traceEvents\": [";
  const int pairs = 2000;
  for (int k = 0; k < pairs; ++k) {
    int tid = k % 2;
    int64_t ts = int64_t{k} * 10;
    json += (k ? "," : "") + std::string("{\"ph\": \"B\", \"name\": \"r\", \"pid\": 1, \"tid\": ") +
            std::to_string(tid) + ", \"ts\": " + std::to_string(ts) + "}";
  }
  for (int k = pairs - 1; k >= 0; --k) {
    int tid = k % 2;
    json += ",{\"ph\": \"E\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
            ", \"ts\": " + std::to_string(int64_t{10'000'000} + (pairs - k) * 10) + "}";
  }
  json += "]}";
  auto t = testing::MustImport(json);
  ASSERT_EQ(t->events.size(), static_cast<size_t>(pairs));
  for (int k = 0; k < pairs; ++k) {
    int64_t begin_us = int64_t{k} * 10, end_us = int64_t{10'000'000} + (pairs - k) * 10;
    ASSERT_EQ(t->events.dur(k), (end_us - begin_us) * 1000) << k;
  }
  EXPECT_EQ(t->events.long_durations().size(), static_cast<size_t>(pairs));
}

TEST(EventTable, ColumnsCostTwentyBytesAnEvent) {
  EventTable ev;
  const size_t n = 1 << 20;
  ev.Reserve(n);
  for (size_t i = 0; i < n; ++i)
    ev.Append(static_cast<int64_t>(i), 2, static_cast<uint32_t>(i % 16), 0, ArgRef{}, 'X', 0);
  EXPECT_LE(ev.MemoryBytes(), n * 20 + 4096);
}

TEST(EventTable, LongRangesFromJsonRoundTripThroughEveryFormat) {
  // A step of 12 s as a complete event and a B/E pair of 6 s, in a trace of short events.
  auto t = testing::MustImport(R"({"traceEvents": [
    {"ph": "X", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 12000000},
    {"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 3},
    {"ph": "B", "name": "phase", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "E", "name": "phase", "pid": 1, "tid": 1, "ts": 6000020}]})");
  ASSERT_EQ(t->events.size(), 3u);
  EXPECT_EQ(t->events.dur(0), 12'000'000'000);
  EXPECT_EQ(t->events.dur(2), 6'000'000'000);
  std::string path = testing::TempPath("long.profsh");
  ASSERT_TRUE(ExportTrace(*t, "profsh", path).ok());
  auto back = LoadTrace(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value()->events.dur(0), 12'000'000'000);
  EXPECT_EQ(back.value()->events.dur(1), 3'000);
  EXPECT_EQ(back.value()->events.dur(2), 6'000'000'000);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace profsh
