#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/exporters/exporter.h"
#include "engine/load/trace_loader.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

using testing::ExportText;
using testing::ImportString;
using testing::MustImport;
using testing::TrickleInput;

std::string ArgText(const Trace& t, size_t event, std::string_view key, bool top = false) {
  auto k = t.strings.Find(key);
  if (!k) return "<no key>";
  ArgValue v;
  if (!t.args.Get(t.events.args(event)).Find(*k, &v, top)) return "<absent>";
  switch (v.type) {
    case ArgType::kInt:
      return std::to_string(v.int_value);
    case ArgType::kString:
    case ArgType::kJson:
      return std::string(t.str(v.str));
    case ArgType::kDouble:
      return std::to_string(v.double_value);
    case ArgType::kBool:
      return v.bool_value ? "true" : "false";
    default:
      return "null";
  }
}

const char kKineto[] = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "GPU"}],
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10, "tid": 11,
   "ts": 4458676983526.767, "dur": 2.5, "args": {"External id": 7, "Input Dims": [[2, 3], []],
   "Input type": ["float", "Scalar"]}},
  {"ph": "X", "cat": "kernel", "name": "void k<1>()", "pid": 0, "tid": 7, "ts": 4458676983530, "dur": 1,
   "args": {"External id": 7, "correlation": 99, "grid": [1, 1, 1], "blocks per SM": 0.25}},
  {"ph": "s", "id": 99, "pid": 10, "tid": 11, "ts": 4458676983527, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 99, "pid": 0, "tid": 7, "ts": 4458676983530, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"name": "process_name", "ph": "M", "ts": 4458676983526, "pid": 10, "tid": 0, "args": {"name": "python3"}},
  {"name": "thread_name", "ph": "M", "ts": 4458676983526, "pid": 10, "tid": 11, "args": {"name": "main"}},
  {"ph": "X", "cat": "Trace", "ts": 4458676983000, "dur": 900, "pid": "Spans", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}
  ],
  "traceName": "t.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1711964646000000000
})json";

TEST(JsonImport, ReadsKinetoObjectFormat) {
  auto t = MustImport(kKineto);
  EXPECT_EQ(t->source_format, "kineto-json");
  ASSERT_EQ(t->events.size(), 7u);
  EXPECT_EQ(t->str(t->events.name(0)), "aten::add");
  EXPECT_EQ(t->category_name(t->events.category(0)), "cpu_op");
  // Relative microseconds with a nanosecond fraction are kept exactly.
  EXPECT_EQ(t->events.ts(0), 4458676983526767);
  EXPECT_EQ(t->events.dur(0), 2500);
  EXPECT_TRUE(t->has_origin);
  EXPECT_EQ(t->origin_ns, 1711964646000000000);
  EXPECT_EQ(ArgText(*t, 0, "External id"), "7");
  EXPECT_EQ(ArgText(*t, 0, "Input Dims"), "[[2,3],[]]");
  EXPECT_EQ(ArgText(*t, 1, "correlation"), "99");
  EXPECT_EQ(ArgText(*t, 1, "blocks per SM"), std::to_string(0.25));
  EXPECT_EQ(ArgText(*t, 3, "id", true), "99");
  EXPECT_EQ(ArgText(*t, 3, "bp", true), "e");
  EXPECT_EQ(t->events.phase(4), 'M');
  // String pids and tids stay strings.
  const Track& span = t->tracks[t->events.track(6)];
  EXPECT_TRUE(span.pid.is_string);
  EXPECT_EQ(t->str(span.pid.str), "Spans");
  ASSERT_NE(t->FindMetadata("deviceProperties"), nullptr);
  EXPECT_EQ(*t->FindMetadata("deviceProperties"), R"([{"id":0,"name":"GPU"}])");
  EXPECT_EQ(t->FindMetadata("baseTimeNanoseconds"), nullptr);  // became origin_ns
}

TEST(JsonImport, BuildsProcessAndThreadTables) {
  auto t = MustImport(kKineto);
  bool found = false;
  for (const ProcessInfo& p : t->processes()) {
    if (!p.pid.is_string && p.pid.number == 10) {
      found = true;
      EXPECT_EQ(t->str(p.name), "python3");
      bool thread_named = false;
      for (uint32_t track : p.tracks) {
        if (t->tracks[track].tid.number == 11) {
          EXPECT_EQ(t->str(t->thread(track).name), "main");
          thread_named = true;
        }
      }
      EXPECT_TRUE(thread_named);
    }
  }
  EXPECT_TRUE(found);
}

TEST(JsonImport, IntegerMicrosecondsAreAbsolute) {
  auto t = MustImport(
      R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1694039968955744, "dur": 3}]})");
  EXPECT_FALSE(t->has_origin);
  EXPECT_EQ(t->events.ts(0), 1694039968955744000);
  EXPECT_EQ(t->events.dur(0), 3000);
}

TEST(JsonImport, FractionsBeyondNanosecondsRound) {
  auto t =
      MustImport(R"([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1.0006, "dur": 2e3}])");
  EXPECT_EQ(t->events.ts(0), 1001);
  EXPECT_EQ(t->events.dur(0), 2000000);
}

TEST(JsonImport, ReadsLegacyBareArray) {
  auto t = MustImport(
      R"([{"name": "aten::conv2d", "ph": "X", "ts": 10, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}}, )"
      R"({"name": "aten::conv2d", "ph": "s", "ts": 10, "tid": 1, "pid": "CPU functions", "id": 0, "cat": "cpu_to_cuda", "args": {}}])");
  EXPECT_EQ(t->source_format, "chrome-json-array");
  ASSERT_EQ(t->events.size(), 2u);
  EXPECT_TRUE(t->events.args(0).empty());  // an empty args object stores nothing
}

TEST(JsonImport, AcceptsArrayWithoutClosingBracket) {
  // The Chrome JSON Array Format allows the ']' to be missing (a writer killed mid-trace).
  auto t = MustImport(
      "[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},\n"
      "{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 1},\n");
  EXPECT_EQ(t->events.size(), 2u);
  auto u = MustImport(
      "[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}");
  EXPECT_EQ(u->events.size(), 1u);
}

TEST(JsonImport, DecodesEscapesAndUnicode) {
  auto t = MustImport(
      R"([{"ph": "X", "name": "caf\u00e9 \ud83d\ude00 \"q\" a\\b\n", "pid": 1, "tid": 1, "ts": 1, "dur": 1,)"
      R"( "args": {"k\u0065y": "v\talue", "raw": "注意"}}])");
  EXPECT_EQ(t->str(t->events.name(0)), "café 😀 \"q\" a\\b\n");
  EXPECT_EQ(ArgText(*t, 0, "key"), "v\talue");
  EXPECT_EQ(ArgText(*t, 0, "raw"), "注意");
}

TEST(JsonImport, MatchesBeginEndPairs) {
  auto t = MustImport(R"([
    {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 15},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 21},
    {"ph": "B", "name": "open", "pid": 1, "tid": 3, "ts": 22}
  ])");
  ASSERT_EQ(t->events.size(), 3u);
  EXPECT_EQ(t->str(t->events.name(0)), "outer");
  EXPECT_EQ(t->events.phase(0), 'X');
  EXPECT_EQ(t->events.dur(0), 10000);
  EXPECT_EQ(t->events.dur(1), 3000);
  EXPECT_TRUE(t->events.flags(2) & kFlagUnterminated);
  EXPECT_EQ(t->warnings.size(), 2u);
}

TEST(JsonImport, ChunkedInputGivesTheSameTrace) {
  auto whole = MustImport(kKineto);
  std::string expected = ExportText(*whole);
  for (size_t chunk : {1u, 2u, 7u, 64u, 1000u}) {
    TrickleInput input(kKineto, chunk);
    auto t = LoadTraceFrom(input);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(ExportText(*t.value()), expected) << "chunk " << chunk;
  }
}

TEST(JsonImport, ExportThenImportRoundTrips) {
  auto t = MustImport(kKineto);
  std::string first = ExportText(*t);
  auto again = MustImport(first);
  EXPECT_EQ(ExportText(*again), first);
  EXPECT_EQ(again->origin_ns, t->origin_ns);
  EXPECT_EQ(again->events.ts(0), t->events.ts(0));
}

struct BadCase {
  const char* json;
  const char* message;  // must appear in the error
};

class JsonImportErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(JsonImportErrors, ReportsWhereAndWhat) {
  auto r = ImportString(GetParam().json);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(GetParam().message), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("test.json"), std::string::npos) << r.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonImportErrors,
    ::testing::Values(
        // Cut before the events begin: nothing to keep (json_import_tolerance_test.cpp has the
        // cuts that keep events).
        BadCase{R"({"traceEvents")", "unexpected end of file"},
        BadCase{R"({"traceEvents": [{"ph": "X", "name": 5, "ts": 1, "dur": 1}]})",
                "field 'name' must be a string"},
        BadCase{R"({"traceEvents": [{"ph": "X", "pid": 1.5, "ts": 1, "dur": 1}]})",
                "field 'pid' must be an integer"},
        BadCase{R"({"traceEvents": [{"ph": "X", "args": [1], "ts": 1, "dur": 1}]})",
                "field 'args' must be an object"},
        BadCase{"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\xff\", \"ts\": 1, \"dur\": 1}]}",
                "invalid UTF-8"},
        BadCase{R"({"traceEvents": [{"ph": "X", "name": "a\q", "ts": 1, "dur": 1}]})",
                "invalid escape"},
        BadCase{R"({"traceEvents": []} x)", "unexpected data after the end"},
        BadCase{R"({"other": 1})", "no \"traceEvents\" array"},
        BadCase{R"({"traceEvents": [{"ph": "X", "ts": 01, "dur": 1}]})", "invalid number"},
        BadCase{R"({"traceEvents": [1]})", "expected an event object"},
        BadCase{R"({"traceEvents": {}})", "\"traceEvents\" must be an array"},
        BadCase{R"({"traceEvents": [], "baseTimeNanoseconds": "x"})", "baseTimeNanoseconds"}));

TEST(JsonImport, ErrorNamesLineAndColumn) {
  auto r = ImportString(
      "{\n  \"traceEvents\": [\n    {\"ph\": \"X\", \"name\": true, \"dur\": 1}\n  ]\n}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("test.json:3:25"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("field 'name' must be a string"), std::string::npos)
      << r.error().message;
}

TEST(JsonImport, RejectsDeepNesting) {
  std::string deep = R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "args": {"a": )" +
                     std::string(2000, '[') + std::string(2000, ']') + "}}]}";
  auto r = ImportString(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace profsh
