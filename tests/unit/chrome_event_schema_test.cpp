// The Chrome event schema on its own: event objects read from the tokenizer, one by one, into a
// Trace. Each case names what the fields become: phase, times in nanoseconds, the track of pid
// and tid, name and category, arguments interned or inline, and the events Perfetto drops. The
// second event of a shape goes the template path, and must give what the full path gives.
#include "engine/importers/chrome_event_schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace profsh {
namespace {

// Reads whitespace-separated event objects the way the importer does: each is read, then
// committed, and its unit's repairs are counted.
struct Events {
  Trace trace;
  std::vector<UnitRepairs::Pending> repairs;
  std::vector<uint64_t> drops;

  explicit Events(const std::string& text) {
    auto input = MemoryInput("test.json", text);
    JsonTokenizer json(*input);
    TraceBuilder builder(trace);
    ChromeEventReader reader(json, builder);
    EXPECT_TRUE(json.Open());
    for (uint64_t index = 0; json.SkipWs() == Step::kOk; ++index) {
      EXPECT_EQ(reader.Read(index), Step::kOk) << json.error();
      EXPECT_EQ(reader.Commit(), Step::kOk) << json.error();
      for (const auto& r : json.repairs().repairs()) repairs.push_back(r);
      for (uint64_t d : json.repairs().drops()) drops.push_back(d);
      json.repairs().Clear();
    }
    EXPECT_TRUE(builder.Finish().ok());
  }
  std::string name(size_t i) const { return std::string(trace.str(trace.events.name(i))); }
  ArgValue arg(size_t i, std::string_view key, bool top_level = false) const {
    ArgValue v;
    auto k = trace.strings.Find(key);
    if (!k || !trace.args.Get(trace.events.args(i)).Find(*k, &v, top_level))
      v.type = ArgType::kNull;
    return v;
  }
  std::string text_arg(size_t i, std::string_view key) const {
    ArgValue v = arg(i, key);
    return v.type == ArgType::kString || v.type == ArgType::kJson ? std::string(trace.str(v.str))
                                                                  : "<not text>";
  }
};

TEST(ChromeEventSchema, FieldsOfACompleteEvent) {
  Events e(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": "main",)"
           R"( "ts": 10.5, "dur": 2, "args": {"External id": 3, "Input Dims": [[2, 3]],)"
           R"( "Input type": "float", "flag": true, "ratio": 0.5}})");
  ASSERT_EQ(e.trace.events.size(), 1u);
  EXPECT_EQ(e.trace.events.phase(0), 'X');
  EXPECT_EQ(e.trace.events.ts(0), 10500);
  EXPECT_EQ(e.trace.events.dur(0), 2000);
  EXPECT_EQ(e.name(0), "aten::mm");
  EXPECT_EQ(e.trace.category_name(e.trace.events.category(0)), "cpu_op");
  const Track& track = e.trace.tracks[e.trace.events.track(0)];
  EXPECT_FALSE(track.pid.is_string);
  EXPECT_EQ(track.pid.number, 7);
  ASSERT_TRUE(track.tid.is_string);
  EXPECT_EQ(e.trace.str(track.tid.str), "main");
  EXPECT_EQ(e.arg(0, "External id").int_value, 3);
  EXPECT_EQ(e.text_arg(0, "Input Dims"), "[[2,3]]");
  EXPECT_EQ(e.text_arg(0, "Input type"), "float");
  EXPECT_TRUE(e.arg(0, "flag").bool_value);
  EXPECT_EQ(e.arg(0, "ratio").double_value, 0.5);
  EXPECT_TRUE(e.repairs.empty());
}

TEST(ChromeEventSchema, TheTemplatePathGivesWhatTheFullPathGives) {
  // Three events of one shape: the second and third differ only in their holes (name, ts, dur,
  // the inline "correlation"), the third's correlation needs two words.
  const std::string shape =
      R"({"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %s, "dur": %s,)"
      R"( "args": {"correlation": %s, "stream": 7}})";
  auto event = [&](const char* name, const char* ts, const char* dur, const char* corr) {
    std::string s = shape;
    for (const char* v : {name, ts, dur, corr}) s.replace(s.find("%s"), 2, v);
    return s;
  };
  Events e(event("k1", "100", "1.5", "5") + "\n" + event("k2", "200.25", "3", "6") + "\n" +
           event("k2", "300", "4", "12345678901"));
  ASSERT_EQ(e.trace.events.size(), 3u);
  EXPECT_EQ(e.name(1), "k2");
  EXPECT_EQ(e.trace.events.ts(1), 200250);
  EXPECT_EQ(e.trace.events.dur(1), 3000);
  EXPECT_EQ(e.arg(1, "correlation").int_value, 6);
  EXPECT_EQ(e.arg(1, "stream").int_value, 7);
  EXPECT_EQ(e.name(2), "k2");
  EXPECT_EQ(e.trace.events.ts(2), 300000);
  EXPECT_EQ(e.arg(2, "correlation").int_value, 12345678901);
  // Volatile numbers are inline: their values leave the schema shared, their types do not.
  EXPECT_EQ(e.trace.events.args(0).schema(), e.trace.events.args(1).schema());
  EXPECT_NE(e.trace.events.args(1).schema(), e.trace.events.args(2).schema());
}

TEST(ChromeEventSchema, CounterValuesAreInlineWhateverTheirName) {
  // "C" events carry their series as arguments: every number varies, even if "ph" comes last.
  Events e(R"({"name": "mem", "pid": 1, "tid": 1, "ts": 1, "args": {"used": 10}, "ph": "C"})"
           "\n"
           R"({"name": "mem", "pid": 1, "tid": 1, "ts": 2, "args": {"used": 20}, "ph": "C"})");
  ASSERT_EQ(e.trace.events.size(), 2u);
  EXPECT_EQ(e.arg(0, "used").int_value, 10);
  EXPECT_EQ(e.arg(1, "used").int_value, 20);
  EXPECT_EQ(e.trace.events.args(0).schema(), e.trace.events.args(1).schema());
}

TEST(ChromeEventSchema, WhatPerfettoDropsOrRepairs) {
  Events e(R"({"name": "no phase", "pid": 1, "tid": 1, "ts": 1})"
           "\n"
           R"({"ph": "X", "name": "no dur", "pid": 1, "tid": 1, "ts": 1})"
           "\n"
           R"({"ph": "i", "name": "ts as text", "pid": "3", "ts": "4.5"})");
  ASSERT_EQ(e.trace.events.size(), 1u);
  EXPECT_EQ(e.name(0), "ts as text");
  EXPECT_EQ(e.trace.events.ts(0), 4500);
  const Track& track = e.trace.tracks[e.trace.events.track(0)];
  EXPECT_FALSE(track.pid.is_string);  // "3" is process 3, as catapult reads it
  EXPECT_EQ(track.pid.number, 3);
  EXPECT_EQ(track.tid.number, 3);  // no tid: tid = pid
  EXPECT_EQ(e.drops, (std::vector<uint64_t>{0, 1}));
  std::vector<Repair> kinds;
  for (const auto& r : e.repairs) kinds.push_back(r.kind);
  EXPECT_EQ(kinds, (std::vector<Repair>{Repair::kMissingPhase, Repair::kCompleteWithoutDur,
                                        Repair::kIdentAsString, Repair::kNumberAsString,
                                        Repair::kMissingTid}));
  EXPECT_EQ(e.repairs.back().where, 2u);  // the event's index in traceEvents
}

TEST(ChromeEventSchema, WrongFieldTypesNameTheEvent) {
  auto input = MemoryInput("test.json", R"({"ph": "X", "name": 5})");
  JsonTokenizer json(*input);
  Trace trace;
  TraceBuilder builder(trace);
  ChromeEventReader reader(json, builder);
  ASSERT_TRUE(json.Open());
  EXPECT_EQ(reader.Read(4), Step::kError);
  EXPECT_EQ(json.error(),
            "test.json:1:21 (byte 20): traceEvents[4]: field 'name' must be a string");
}

TEST(ChromeEventSchema, VolatileKeys) {
  EXPECT_TRUE(IsVolatileKey("External id", false));
  EXPECT_TRUE(IsVolatileKey("correlation", false));
  EXPECT_TRUE(IsVolatileKey("Sequence number", false));
  EXPECT_FALSE(IsVolatileKey("stream", false));
  EXPECT_TRUE(IsVolatileKey("id", true));
  EXPECT_FALSE(IsVolatileKey("correlation", true));
}

}  // namespace
}  // namespace profsh
