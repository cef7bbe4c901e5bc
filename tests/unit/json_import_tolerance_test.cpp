// What the JSON reader accepts beyond the format, as Perfetto's and catapult's readers do, and
// how it says so: each repair with the events it keeps, its import_stats entry and its warning;
// B/E matching and slice nesting by Perfetto's rules. docs/ANALYSIS.md, "What the JSON reader
// accepts", lists the rules these cases check.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/exporters/sqlite_database.h"
#include "engine/load/trace_loader.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

using testing::ExportText;
using testing::ImportString;
using testing::MustImport;
using testing::TrickleInput;

const Trace::ImportStat* FindStat(const Trace& t, std::string_view description_part) {
  for (const auto& s : t.import_stats)
    if (s.description.find(description_part) != std::string::npos) return &s;
  return nullptr;
}

// The one warning line of a kind: its count and first place are in it.
std::string WarningWith(const Trace& t, std::string_view part) {
  std::string found;
  for (const auto& w : t.warnings) {
    if (w.find(part) == std::string::npos) continue;
    EXPECT_TRUE(found.empty()) << "two warning lines for " << part;
    found = w;
  }
  return found;
}

// Checks one repair kind: its stat (name, count, first place) and the warning line saying so.
void ExpectRepair(const Trace& t, std::string_view description_part, std::string_view stat_name,
                  int64_t count, std::string_view first_place) {
  const Trace::ImportStat* s = FindStat(t, description_part);
  ASSERT_NE(s, nullptr) << "no stat for " << description_part;
  EXPECT_EQ(s->name, stat_name);
  EXPECT_EQ(s->count, count) << description_part;
  EXPECT_EQ(s->first_place, first_place) << description_part;
  std::string w = WarningWith(t, description_part);
  EXPECT_EQ(w, std::to_string(count) + " " + s->description + " (first at " +
                   std::string(first_place) + ")");
}

std::vector<std::string> Names(const Trace& t) {
  std::vector<std::string> out;
  for (size_t i = 0; i < t.events.size(); ++i) out.emplace_back(t.str(t.events.name(i)));
  return out;
}

std::string Arg(const Trace& t, size_t event, std::string_view key, bool top = false) {
  auto k = t.strings.Find(key);
  ArgValue v;
  if (!k || !t.args.Get(t.events.args(event)).Find(*k, &v, top)) return "<absent>";
  switch (v.type) {
    case ArgType::kInt:
      return std::to_string(v.int_value);
    case ArgType::kDouble:
      return std::to_string(v.double_value);
    case ArgType::kString:
    case ArgType::kJson:
      return std::string(t.str(v.str));
    default:
      return "<other>";
  }
}

std::string Sql(const Trace& t, const std::string& query) {
  auto rows = QueryTrace(t, query);
  if (!rows.ok()) return rows.error().message;
  return rows.value().FormatCsv();
}

TEST(JsonTolerance, CleanTraceHasNoRepairs) {
  auto t = MustImport(R"({"traceEvents": [
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"x": [1, 2]}},
    {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 5},
    {"ph": "E", "name": "b", "pid": 1, "tid": 1, "ts": 6}
  ], "displayTimeUnit": "ns"})");
  EXPECT_TRUE(t->warnings.empty());
  EXPECT_TRUE(t->import_stats.empty());
}

TEST(JsonTolerance, NumbersWrittenAsStrings) {
  // Perfetto's diff test string_ts_and_dur, and the thread times of string_tts_and_tdur.
  auto t = MustImport(R"([
    {"ph": "X", "name": "a", "pid": 10, "tid": 12, "ts": "250", "dur": "50.5",
     "tts": "240", "tdur": "40.5"},
    {"ph": "X", "name": "b", "pid": 10, "tid": 12, "ts": 400, "dur": 1, "tts": 7}
  ])");
  ASSERT_EQ(t->events.size(), 2u);
  EXPECT_EQ(t->events.ts(0), 250000);
  EXPECT_EQ(t->events.dur(0), 50500);
  EXPECT_EQ(Arg(*t, 0, "tts", true), "240");
  EXPECT_EQ(Arg(*t, 0, "tdur", true), std::to_string(40.5));
  EXPECT_EQ(Arg(*t, 1, "tts", true), "7");
  ExpectRepair(*t, "numbers written as strings", "json_number_as_string", 4, "event 0");
}

TEST(JsonTolerance, TimeStringsThatAreNoNumberDropTheEvent) {
  // Perfetto's invalid_string_ts_and_dur and string_ts_trailing_chars: the events go, with a
  // json_tokenizer_failure; an 'M' event's timestamp does not matter.
  auto t = MustImport(R"([
    {"ph": "X", "name": "bad_dur", "pid": 1, "tid": 1, "ts": "300", "dur": "invalid"},
    {"ph": "X", "name": "bad_ts", "pid": 1, "tid": 1, "ts": "100a", "dur": "50"},
    {"ph": "X", "name": "null_ts", "pid": 1, "tid": 1, "ts": null, "dur": 5},
    {"ph": "M", "name": "process_name", "pid": 1, "ts": "invalid", "args": {"name": "p"}},
    {"ph": "X", "name": "kept", "pid": 1, "tid": 1, "ts": 7, "dur": 1}
  ])");
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"process_name", "kept"}));
  ExpectRepair(*t, "'ts' or 'dur' string is not a number", "json_tokenizer_failure", 3, "event 0");
}

TEST(JsonTolerance, PidAndTidWrittenAsDigitsAreNumbers) {
  auto t = MustImport(R"([
    {"ph": "X", "name": "a", "pid": "12", "tid": "7", "ts": 1, "dur": 1},
    {"ph": "X", "name": "b", "pid": 12, "tid": 7, "ts": 2, "dur": 1},
    {"ph": "X", "name": "c", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 3, "dur": 1}
  ])");
  EXPECT_EQ(t->events.track(0), t->events.track(1));
  const Track& named = t->tracks[t->events.track(2)];
  EXPECT_TRUE(named.pid.is_string);
  ExpectRepair(*t, "pids or tids written as strings", "json_id_as_string", 2, "event 0");
}

TEST(JsonTolerance, CompleteEventsWithoutDurationAreDropped) {
  // Perfetto drops them (json_parser_failure); 'tdur' alone is thread time, no duration.
  auto t = MustImport(R"({"traceEvents": [
    {"ph": "X", "name": "kept", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "name": "tdur_only", "pid": 1, "tid": 1, "ts": 2, "tdur": 1},
    {"ph": "X", "name": "nothing", "pid": 1, "tid": 1, "ts": 3},
    {"ph": "i", "name": "instant", "pid": 1, "tid": 1, "ts": 4}
  ]})");
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"kept", "instant"}));
  ExpectRepair(*t, "complete ('X') events without 'dur' dropped", "json_parser_failure", 2,
               "event 1");
}

TEST(JsonTolerance, MissingTidIsThePid) {
  // Perfetto's x_event_order: the child has no tid, so it is on thread 1 of process 1 and
  // nests under the longer event at the same timestamp that follows it in the file.
  auto t = MustImport(R"([
    {"name": "Child", "ph": "X", "ts": 1, "dur": 5, "pid": 1},
    {"name": "Parent", "ph": "X", "ts": 1, "dur": 10, "pid": 1, "tid": 1}
  ])");
  ASSERT_EQ(t->events.size(), 2u);
  EXPECT_EQ(t->events.track(0), t->events.track(1));
  EXPECT_EQ(t->tracks[t->events.track(0)].tid.number, 1);
  ExpectRepair(*t, "events without 'tid'", "json_missing_tid", 1, "event 0");
  EXPECT_EQ(Sql(*t, "SELECT ts, dur, name, depth FROM slice ORDER BY depth"),
            "ts,dur,name,depth\n1000,10000,Parent,0\n1000,5000,Child,1\n");
}

TEST(JsonTolerance, MissingPidIsZero) {
  auto t = MustImport(R"([{"name": "a", "ph": "X", "ts": 1, "dur": 5, "tid": 3}])");
  ASSERT_EQ(t->events.size(), 1u);
  const Track& track = t->tracks[t->events.track(0)];
  EXPECT_EQ(track.pid.number, 0);
  EXPECT_EQ(track.tid.number, 3);
  ExpectRepair(*t, "events without 'pid'", "json_missing_pid", 1, "event 0");
  EXPECT_EQ(FindStat(*t, "events without 'tid'"), nullptr);
}

TEST(JsonTolerance, LongPhaseIsItsFirstLetter) {
  auto t = MustImport(R"([
    {"name": "a", "ph": "Xtra", "ts": 1, "dur": 5, "pid": 1, "tid": 1},
    {"name": "b", "ph": "X", "ts": 2, "dur": 1, "pid": 1, "tid": 1}
  ])");
  ASSERT_EQ(t->events.size(), 2u);
  EXPECT_EQ(t->events.phase(0), 'X');
  EXPECT_EQ(t->events.dur(0), 5000);
  ExpectRepair(*t, "longer than one letter", "json_long_phase", 1, "event 0");
}

TEST(JsonTolerance, EventsWithoutPhaseOrTimestampAreDropped) {
  auto t = MustImport(R"({"traceEvents": [
    {"name": "no_ph", "ts": 1, "dur": 1, "pid": 1, "tid": 1},
    {"name": "empty_ph", "ph": "", "ts": 1, "pid": 1, "tid": 1},
    {"name": "number_ph", "ph": 5, "ts": 1, "pid": 1, "tid": 1},
    {"name": "no_ts", "ph": "i", "pid": 1, "tid": 1},
    {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "main"}},
    {"name": "kept", "ph": "i", "ts": 2, "pid": 1, "tid": 1},
    {}
  ]})");
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"thread_name", "kept"}));
  ExpectRepair(*t, "events without a phase", "json_tokenizer_failure", 3, "event 0");
  ExpectRepair(*t, "events without a timestamp", "json_tokenizer_failure", 1, "event 3");
  ExpectRepair(*t, "empty event objects", "json_empty_event", 1, "event 6");
}

TEST(JsonTolerance, TrailingCommas) {
  // Perfetto's json_trailing_comma, and the same in every other object and array.
  const std::string json =
      "{\"traceEvents\": [\n"
      "{\"name\": \"Foo\", \"ph\": \"X\", \"tid\": 0, \"pid\": 0, \"ts\": 3473608.458, "
      "\"dur\": 295555.500, \"args\": {\"dims\": [[1, 2,], [],], \"k\": 1,},},\n"
      "{\"name\": \"Bar\", \"ph\": \"X\", \"tid\": 0, \"pid\": 0, \"ts\": 4890.000, "
      "\"dur\": 3764289.708},\n"
      "], \"meta\": {\"a\": [1,],},}";
  auto t = MustImport(json);
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"Foo", "Bar"}));
  EXPECT_EQ(t->events.ts(1), 4890000);
  EXPECT_EQ(t->events.dur(1), 3764289708);
  EXPECT_EQ(Arg(*t, 0, "dims"), "[[1,2],[]]");
  EXPECT_EQ(Arg(*t, 0, "k"), "1");
  ASSERT_NE(t->FindMetadata("meta"), nullptr);
  EXPECT_EQ(*t->FindMetadata("meta"), R"({"a":[1]})");
  // [1, 2,]  [..,]  {..,} (args)  {..,} (event)  [..,] (events)  [1,]  {..,} (meta)  {..,}
  ExpectRepair(*t, "trailing commas", "json_trailing_comma", 8,
               "byte " + std::to_string(json.find(",]") + 1));
}

TEST(JsonTolerance, MissingCommaBetweenEvents) {
  const std::string json = R"([{"name": "a", "ph": "i", "ts": 1, "pid": 1, "tid": 1}
    {"name": "b", "ph": "i", "ts": 2, "pid": 1, "tid": 1}])";
  auto t = MustImport(json);
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"a", "b"}));
  ExpectRepair(*t, "missing commas", "json_missing_comma", 1,
               "byte " + std::to_string(json.find("\n    {") + 5));
}

TEST(JsonTolerance, RawControlCharactersInStrings) {
  // PyTorch writes them (pytorch#130622); Perfetto and browsers read them.
  const std::string json =
      "[{\"name\": \"a\tb\", \"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1, "
      "\"args\": {\"s\": \"x\ny\", \"j\": [\"p\rq\"]}}]";
  auto t = MustImport(json);
  ASSERT_EQ(t->events.size(), 1u);
  EXPECT_EQ(t->str(t->events.name(0)), "a\tb");
  EXPECT_EQ(Arg(*t, 0, "s"), "x\ny");
  EXPECT_EQ(Arg(*t, 0, "j"), "[\"p\\u000dq\"]");  // kept as JSON text, so escaped
  ExpectRepair(*t, "raw control characters", "json_control_character", 3,
               "byte " + std::to_string(json.find('\t')));
  // What profsh writes is JSON again: reading it back needs no repair.
  auto again = MustImport(ExportText(*t));
  EXPECT_EQ(FindStat(*again, "raw control characters"), nullptr);
  EXPECT_EQ(again->str(again->events.name(0)), "a\tb");
}

TEST(JsonTolerance, DisplayTimeUnitOnlyNamesTheDisplayUnit) {
  // Perfetto (stats json_display_time_unit) and catapult read "ts" in microseconds whatever the
  // unit: it is how viewers show times.
  auto t = MustImport(R"({"displayTimeUnit": "ns", "traceEvents": [
    {"name": "a", "ph": "X", "ts": 5, "dur": 2, "pid": 1, "tid": 1}]})");
  EXPECT_EQ(t->events.ts(0), 5000);
  EXPECT_EQ(t->events.dur(0), 2000);
  ASSERT_NE(t->FindMetadata("displayTimeUnit"), nullptr);
  EXPECT_EQ(*t->FindMetadata("displayTimeUnit"), "\"ns\"");
  EXPECT_TRUE(t->warnings.empty());
}

const char kWhole[] = R"json({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10, "tid": 11, "ts": 100.5, "dur": 2.5,
   "args": {"External id": 7, "Input Dims": [[2, 3], []], "name": "café"}},
  {"ph": "X", "cat": "kernel", "name": "void k<1>()",
           "pid" : 0, "tid" : 7, "ts" : 104, "dur" : 1, "args" : {
  "correlation" : 99, "grid" : [ 1, 1, 1 ]
}
},
  {"ph": "i", "name": "mark", "pid": 10, "tid": 11, "ts": 106, "s": "t"},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10, "tid": 11, "ts": 110, "dur": 2.5,
   "args": {"External id": 8, "Input Dims": [[2, 3], []], "name": "café"}}
  ],
  "deviceProperties": [{"id": 0, "name": "GPU"}],
  "baseTimeNanoseconds": 1711964646000000000
})json";

TEST(JsonTolerance, TraceCutAnywhereKeepsEveryWholeEventBeforeTheCut) {
  const std::string whole = kWhole;
  auto full = MustImport(whole);
  ASSERT_EQ(full->events.size(), 4u);
  const size_t events_begin = whole.find('[') + 1;
  size_t last_count = 0;
  for (size_t cut = events_begin; cut < whole.size(); ++cut) {
    const std::string part = whole.substr(0, cut);
    auto r = ImportString(part);
    ASSERT_TRUE(r.ok()) << "cut at " << cut << ": " << r.error().message;
    const Trace& t = *r.value();
    ASSERT_GE(t.events.size(), last_count) << "cut at " << cut;
    last_count = t.events.size();
    for (size_t i = 0; i < t.events.size(); ++i) {
      EXPECT_EQ(t.events.ts(i), full->events.ts(i)) << "cut at " << cut;
      EXPECT_EQ(t.events.name(i) == 0, full->events.name(i) == 0);
      EXPECT_EQ(t.str(t.events.name(i)), full->str(full->events.name(i)));
    }
    const Trace::ImportStat* s = FindStat(t, "trace cut short");
    ASSERT_NE(s, nullptr) << "cut at " << cut << " looks clean";
    EXPECT_EQ(s->name, "json_trace_truncated");
    EXPECT_EQ(s->count, 1);
    // The same whether read whole or a few bytes at a time, as a gzip stream is.
    TrickleInput input(part, 7);
    auto chunked = LoadTraceFrom(input);
    ASSERT_TRUE(chunked.ok()) << chunked.error().message;
    EXPECT_EQ(chunked.value()->events.size(), t.events.size()) << "cut at " << cut;
    EXPECT_EQ(chunked.value()->warnings, t.warnings) << "cut at " << cut;
  }
  EXPECT_EQ(last_count, 4u);
}

TEST(JsonTolerance, GzipFileCutShortKeepsItsWholeEvents) {
  // A writer killed while it compressed the trace leaves a gzip stream without its end.
  std::string json = "{\"traceEvents\": [\n";
  for (int i = 0; i < 2000; ++i) {
    json += std::string(i ? ",\n" : "") + "{\"ph\": \"X\", \"name\": \"op" +
            std::to_string(i % 97) +
            "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i * 10) + ", \"dur\": 5}";
  }
  json += "]}";
  const std::string path = testing::TempPath("cut.json.gz");
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, json.data(), static_cast<unsigned>(json.size())),
            static_cast<int>(json.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  auto whole = LoadTrace(path);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole.value()->events.size(), 2000u);
  EXPECT_TRUE(whole.value()->warnings.empty());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() * 6 / 10));
  }
  auto cut = LoadTrace(path);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  const Trace& t = *cut.value();
  EXPECT_GT(t.events.size(), 100u);
  EXPECT_LT(t.events.size(), 2000u);
  for (size_t i = 0; i < t.events.size(); ++i)
    ASSERT_EQ(t.events.ts(i), whole.value()->events.ts(i));
  const Trace::ImportStat* s = FindStat(t, "trace cut short");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->count, 1);
  std::remove(path.c_str());
}

TEST(JsonTolerance, CutInsideAnEventNamesWhereTheLostPartBegins) {
  const std::string whole = kWhole;
  const size_t third = whole.find("{\"ph\": \"i\"");
  auto t = MustImport(whole.substr(0, third + 20));
  EXPECT_EQ(t->events.size(), 2u);
  // The unit that was cut begins right after the comma that ends the second event.
  const size_t unit = whole.rfind(',', third) + 1;
  ExpectRepair(*t, "trace cut short", "json_trace_truncated", 1, "byte " + std::to_string(unit));
}

TEST(JsonTolerance, ArrayWithoutClosingBracketIsTheFormat) {
  // The Chrome JSON Array Format makes the ']' optional: no repair to report.
  auto t = MustImport("[{\"ph\": \"i\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1},\n");
  EXPECT_EQ(t->events.size(), 1u);
  EXPECT_TRUE(t->warnings.empty());
  // Perfetto's json_incomplete: the same, with a cut inside the next event, is a repair.
  auto u =
      MustImport("[{\"ph\": \"i\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1},\n{\"ph");
  EXPECT_EQ(u->events.size(), 1u);
  EXPECT_NE(FindStat(*u, "trace cut short"), nullptr);
}

TEST(JsonTolerance, RefusesWhatNoImporterCanRead) {
  for (const char* bad : {"{", "{\"traceEvents\"", "{\"other\": [1, 2]}", "[1, 2]",
                          "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\\q\"}]}"}) {
    auto r = ImportString(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(JsonTolerance, RepairsCountOnceWhateverTheChunking) {
  // Units parsed again after a refill, events parsed again for their schema, and templates
  // formed from clean events must not change the counts.
  std::string json = "{\"traceEvents\": [\n";
  for (int i = 0; i < 40; ++i) {
    const std::string ts = std::to_string(10 * i);
    json += "{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": " + ts +
            ", \"dur\": 1, \"args\": {\"n\": " + std::to_string(i) + "}},\n";
    json += "{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": \"" + ts +
            ".5\", \"dur\": 1, \"args\": {\"n\": " + std::to_string(i) + "}},\n";
    json += "{\"ph\": \"X\", \"name\": \"o\tp\", \"pid\": 1, \"tid\": 1, \"ts\": " + ts +
            ", \"dur\": 1, \"args\": {\"n\": " + std::to_string(i) + ",}},\n";
  }
  json += "]}";
  auto whole = MustImport(json);
  EXPECT_EQ(whole->events.size(), 120u);
  ExpectRepair(*whole, "numbers written as strings", "json_number_as_string", 40, "event 1");
  ExpectRepair(*whole, "raw control characters", "json_control_character", 40,
               "byte " + std::to_string(json.find('\t')));
  ExpectRepair(*whole, "trailing commas", "json_trailing_comma", 41,
               "byte " + std::to_string(json.find(",}") + 1));
  for (size_t chunk : {1u, 3u, 64u, 1000u}) {
    TrickleInput input(json, chunk);
    auto t = LoadTraceFrom(input);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t.value()->warnings, whole->warnings) << "chunk " << chunk;
    EXPECT_EQ(ExportText(*t.value()), ExportText(*whole)) << "chunk " << chunk;
  }
}

TEST(JsonTolerance, DamagedTracesReadTheSameWholeOrChunked) {
  // Random damage of the kinds the reader repairs (and some it refuses): whole input and input
  // handed out a few bytes at a time, as gzip is, must give the same trace, warnings and errors
  // (a unit parsed again after a refill must not count its repairs twice).
  const std::string whole = kWhole;
  const std::vector<std::string> damage = {",",  "}",  "]",     "\"",   "\t",   "{}",
                                           ",]", ",}", "\"5\"", "null", "\x01", "{\"ph\": \"E\"}"};
  uint32_t seed = 12345;
  auto next = [&](size_t n) {
    seed = seed * 1103515245u + 12345u;
    return static_cast<size_t>((seed >> 8) % n);
  };
  size_t loaded = 0;
  for (int round = 0; round < 400; ++round) {
    std::string text = whole;
    for (int k = 0, edits = 1 + static_cast<int>(next(3)); k < edits; ++k) {
      const size_t at = next(text.size() + 1);
      switch (next(3)) {
        case 0:
          text.insert(at, damage[next(damage.size())]);
          break;
        case 1:
          text.erase(at, 1 + next(6));
          break;
        default:
          text.resize(at);
      }
    }
    auto a = ImportString(text);
    for (size_t chunk : {1u, 5u}) {
      TrickleInput input(text, chunk);
      auto b = LoadTraceFrom(input);
      ASSERT_EQ(a.ok(), b.ok()) << text << "\n" << (a.ok() ? b.error() : a.error()).message;
      if (!a.ok()) continue;
      EXPECT_EQ(a.value()->warnings, b.value()->warnings) << text;
      EXPECT_EQ(ExportText(*a.value()), ExportText(*b.value())) << text;
    }
    loaded += a.ok();
  }
  EXPECT_GT(loaded, 100u);  // much of the damage is repaired, not refused
}

TEST(JsonTolerance, EndMatchesTheInnermostBeginOfItsName) {
  // Perfetto's SliceTracker::End: by name (and category where the 'E' has them); begins still
  // open above the one ended end with it (misplaced_end_event); an 'E' that matches nothing is
  // dropped.
  auto t = MustImport(R"([
    {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12},
    {"ph": "E", "name": "outer", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "E", "name": "nobody", "pid": 1, "tid": 1, "ts": 21},
    {"ph": "B", "name": "a", "cat": "c1", "pid": 1, "tid": 2, "ts": 30},
    {"ph": "B", "name": "b", "pid": 1, "tid": 2, "ts": 31},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 32},
    {"ph": "E", "name": "a", "cat": "c2", "pid": 1, "tid": 2, "ts": 33},
    {"ph": "E", "name": "a", "cat": "c1", "pid": 1, "tid": 2, "ts": 34}
  ])");
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"outer", "inner", "a", "b"}));
  EXPECT_EQ(t->events.dur(0), 10000);  // outer: 10..20
  EXPECT_EQ(t->events.dur(1), 8000);   // inner ends with outer
  EXPECT_EQ(t->events.dur(2), 4000);   // a: its category's end, not c2's
  EXPECT_EQ(t->events.dur(3), 1000);   // b: the 'E' without a name ends the innermost
  for (size_t i = 0; i < t->events.size(); ++i) {
    EXPECT_EQ(t->events.phase(i), 'X');
    EXPECT_FALSE(t->events.flags(i) & kFlagUnterminated);
  }
  ExpectRepair(*t, "with begins still open inside it", "misplaced_end_event", 1, "event 2");
  ExpectRepair(*t, "matched no open begin", "unmatched_end_event", 2, "event 3");
}

TEST(JsonTolerance, PlacesOfBeginEndRepairsCountDroppedEvents) {
  auto t = MustImport(R"([
    {"name": "dropped", "ts": 1},
    {"ph": "E", "name": "x", "pid": 1, "tid": 1, "ts": 2},
    {"ph": "B", "name": "open", "pid": 1, "tid": 1, "ts": 3},
    {"ph": "i", "name": "last", "pid": 1, "tid": 1, "ts": 9}
  ])");
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"open", "last"}));
  EXPECT_EQ(t->events.dur(0), 6000);
  EXPECT_TRUE(t->events.flags(0) & kFlagUnterminated);
  ExpectRepair(*t, "matched no open begin", "unmatched_end_event", 1, "event 1");
  ExpectRepair(*t, "never ended", "unterminated_begin_event", 1, "event 2");
}

TEST(JsonTolerance, NestingByPerfettosRules) {
  // Perfetto's SliceTracker: at one timestamp longer slices enclose shorter ones, a slice ending
  // where another starts does not enclose it, a zero-duration slice encloses no slice that
  // starts with it, and instants at one timestamp stack.
  auto t = MustImport(R"([
    {"name": "zero", "ph": "X", "ts": 10, "dur": 0, "pid": 1, "tid": 1},
    {"name": "long", "ph": "X", "ts": 10, "dur": 5, "pid": 1, "tid": 1},
    {"name": "short", "ph": "X", "ts": 10, "dur": 2, "pid": 1, "tid": 1},
    {"name": "next", "ph": "X", "ts": 15, "dur": 1, "pid": 1, "tid": 1},
    {"name": "i1", "ph": "i", "ts": 20, "pid": 1, "tid": 1},
    {"name": "i2", "ph": "i", "ts": 20, "pid": 1, "tid": 1},
    {"name": "z1", "ph": "B", "ts": 30, "pid": 1, "tid": 1},
    {"name": "z1", "ph": "E", "ts": 30, "pid": 1, "tid": 1},
    {"name": "after", "ph": "X", "ts": 30, "dur": 3, "pid": 1, "tid": 1}
  ])");
  EXPECT_EQ(Sql(*t,
                "SELECT s.name, s.depth, p.name AS parent FROM slice s "
                "LEFT JOIN slice p ON s.parent_id = p.id ORDER BY s.ts, s.depth"),
            "name,depth,parent\n"
            "long,0,\n"
            "short,1,long\n"
            "zero,2,short\n"
            "next,0,\n"
            "i1,0,\n"
            "i2,1,i1\n"
            "after,0,\n"
            "z1,1,after\n");
}

}  // namespace
}  // namespace profsh
