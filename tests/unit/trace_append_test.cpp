// Copying one trace's events into a trace being built (a torch.profiler trace joining profsh's
// streams, a rank joining a job): names, categories, tracks and argument schemas interned anew,
// inline argument words copied, and the caller placing or leaving out each event.
#include "engine/trace/trace_append.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/trace/trace_builder.h"
#include "test_util.h"

namespace profsh {
namespace {

// The value of `key` among an event's args, as text ("" when absent).
std::string Arg(const Trace& t, size_t event, std::string_view key) {
  const std::optional<uint32_t> id = t.strings.Find(key);
  ArgValue v;
  if (!id || !t.args.Get(t.events.args(event)).Find(*id, &v)) return "";
  if (v.type == ArgType::kString) return std::string(t.str(v.str));
  if (v.is_number()) return std::to_string(v.AsInt());
  return "?";
}

TEST(TraceAppend, EventsArePlacedWithTheirArgumentsInTheDestinationsPools) {
  auto from = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 10, "dur": 5,
     "args": {"External id": 7, "Input type": ["float"], "Sequence number": 123456789012}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": "GPU 0", "tid": "stream 7", "ts": 12,
     "dur": 3, "args": {"correlation": 99}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "left out", "pid": 1, "tid": 2, "ts": 14}
  ]})json");
  Trace to;
  TraceBuilder builder(to);
  // Something already there, so that the copied strings and schemas cannot keep their ids.
  EventFields first;
  first.name = "already here";
  first.category = "user_annotation";
  first.pid = Ident{3, 0, false};
  first.tid = Ident{3, 0, false};
  builder.BeginArgs();
  builder.AddStringArg("note", "x");
  builder.AddEvent(first, builder.BuildSchema(), {});
  const size_t appended =
      AppendEvents(*from, builder, [&](size_t i, int64_t* ts, Ident* pid, Ident*, bool*) {
        if (from->events.phase(i) == 'i') return false;
        *ts += 1'000'000;  // 1 ms later on the destination's clock
        if (!pid->is_string) pid->number += 100;
        return true;
      });
  ASSERT_TRUE(builder.Finish().ok());
  EXPECT_EQ(appended, 2u);
  ASSERT_EQ(to.events.size(), 3u);
  size_t mm = SIZE_MAX, gemm = SIZE_MAX;
  for (size_t i = 0; i < to.events.size(); ++i) {
    if (to.str(to.events.name(i)) == "aten::mm") mm = i;
    if (to.str(to.events.name(i)) == "gemm") gemm = i;
  }
  ASSERT_NE(mm, SIZE_MAX);
  ASSERT_NE(gemm, SIZE_MAX);
  EXPECT_EQ(to.category_name(to.events.category(mm)), "cpu_op");
  EXPECT_EQ(to.events.ts(mm), from->events.ts(0) + 1'000'000);
  EXPECT_EQ(to.events.dur(mm), 5'000);
  EXPECT_EQ(to.tracks[to.events.track(mm)].pid.number, 101);
  EXPECT_EQ(Arg(to, mm, "External id"), "7");
  EXPECT_EQ(Arg(to, mm, "Sequence number"), "123456789012");  // two inline words
  EXPECT_EQ(Arg(to, gemm, "correlation"), "99");
  // String tracks are interned in the destination's pool.
  const Track& track = to.tracks[to.events.track(gemm)];
  ASSERT_TRUE(track.pid.is_string);
  EXPECT_EQ(to.str(track.pid.str), "GPU 0");
  EXPECT_EQ(to.str(track.tid.str), "stream 7");
}

}  // namespace
}  // namespace profsh
