// The importer's fast paths (event templates, argument signatures, chunked refills) against an
// independent reading of the same text by nlohmann::json: every event's fields and arguments must
// come out the same, whatever the chunking.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/load/trace_loader.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

using nlohmann::json;

// Random events drawn from few shapes, so that templates form, with variations that must each
// defeat a template: ids past 32 bits, doubles, a changed constant, an escaped name, fields in
// another order, counters whose "ph" comes last, odd whitespace, and events of one shape whose
// names differ after their first hole.
struct Generated {
  std::string text;
  std::vector<std::pair<std::string, std::string>> times;  // the text of "ts" and "dur" per event
};

Generated RandomTrace(uint32_t seed, size_t events) {
  Generated g;
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const char* names[] = {"aten::add",     "aten::mm", "cudaLaunchKernel", "void k<1>(float*)",
                         "caf\\u00e9 op", "ac2g",     "quote\\\" name",   "注意"};
  const char* cats[] = {"cpu_op", "cuda_runtime", "kernel", "ac2g", "user_annotation"};
  std::string& out = g.text;
  out = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events; ++i) {
    if (i > 0) out += ",\n";
    std::string name = names[pick(std::size(names))];
    std::string cat = cats[pick(std::size(cats))];
    int64_t ts = 1000000 + static_cast<int64_t>(i) * 1000 + static_cast<int64_t>(pick(999));
    std::string tss = std::to_string(ts);
    if (pick(3) == 0) tss += "." + std::to_string(100 + pick(900));
    int64_t ext =
        pick(10) == 0 ? (int64_t{1} << 33) + static_cast<int64_t>(i) : static_cast<int64_t>(i);
    std::string ws = pick(20) == 0 ? "  " : " ";
    std::string dur = std::to_string(pick(5000));
    g.times.emplace_back(tss, dur);
    switch (pick(7)) {
      case 0:  // a flow event with a top-level id
        out += "  {\"ph\": \"" + std::string(pick(2) ? "s" : "f") + "\", \"id\":" + ws +
               std::to_string(ext) + ", \"pid\": 1, \"tid\": " + std::to_string(1 + pick(2)) +
               ", \"ts\": " + tss + ", \"cat\": \"ac2g\", \"name\": \"ac2g\"" +
               (pick(2) ? ", \"bp\": \"e\"" : "") + "}";
        break;
      case 1:  // a counter whose ph comes after its args
        out += "  {\"name\": \"mem\", \"pid\": 1, \"tid\": 1, \"ts\": " + tss +
               ", \"args\": {\"allocated\": " + std::to_string(pick(100000)) +
               ", \"reserved\": " + std::to_string(pick(3)) + ".5}, \"ph\": \"C\"}";
        break;
      case 2:  // an instant whose name comes after a varying number: one shape, many names
        out += "  {\"ph\": \"i\", \"s\": \"t\", \"pid\": 1, \"tid\": 1, \"ts\": " + tss +
               ", \"name\": \"" + name + "\"}";
        break;
      default: {
        std::string args = "{\"External id\": " + std::to_string(ext) + ", \"correlation\": " +
                           std::to_string(ext + static_cast<int64_t>(pick(3))) +
                           ", \"Input Dims\": [[" + std::to_string(1 + pick(3)) + ", 4], []]";
        if (pick(4) == 0)
          args += ", \"memory bandwidth (GB/s)\": " + std::to_string(pick(1000)) + "." +
                  std::to_string(pick(100));
        if (pick(8) == 0) args += ", \"flag\": true, \"nothing\": null";
        args += "}";
        out += "  {\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
               "\", \"pid\": 1, \"tid\": " + std::to_string(1 + pick(2)) + ",\n    \"ts\": " + tss +
               ", \"dur\":" + ws + dur + ",\n    \"args\": " + args + "}";
      }
    }
  }
  out += "\n]}\n";
  return g;
}

// What the trace says about event i, as JSON.
json EventAsJson(const Trace& t, size_t i) {
  json e;
  e["ph"] = std::string(1, t.events.phase(i));
  e["name"] = std::string(t.str(t.events.name(i)));
  e["cat"] = std::string(t.category_name(t.events.category(i)));
  e["ts_ns"] = t.events.ts(i);
  e["dur_ns"] = t.events.phase(i) == 'X' ? t.events.dur(i) : 0;
  e["tid"] = t.tracks[t.events.track(i)].tid.number;
  json args = json::object();
  for (auto item : t.args.Get(t.events.args(i))) {
    json v;
    switch (item.value.type) {
      case ArgType::kNull:
        v = nullptr;
        break;
      case ArgType::kBool:
        v = item.value.bool_value;
        break;
      case ArgType::kInt:
        v = item.value.int_value;
        break;
      case ArgType::kUInt:
        v = static_cast<uint64_t>(item.value.int_value);
        break;
      case ArgType::kDouble:
        v = item.value.double_value;
        break;
      case ArgType::kString:
        v = std::string(t.str(item.value.str));
        break;
      case ArgType::kJson:
        v = json::parse(t.str(item.value.str));
        break;
    }
    (item.top_level ? e : args)[std::string(t.str(item.key))] = v;
  }
  e["args"] = args;
  return e;
}

int64_t MicrosTextToNanos(const std::string& raw) {
  size_t dot = raw.find('.');
  int64_t whole = std::stoll(raw.substr(0, dot));
  int64_t frac = 0;
  if (dot != std::string::npos) frac = std::stoll((raw.substr(dot + 1) + "000").substr(0, 3));
  return whole * 1000 + frac;
}

// The same from nlohmann's reading of the text.
json ExpectedEvent(const json& ev, const std::string& ts_text, const std::string& dur_text) {
  json e;
  e["ph"] = ev["ph"];
  e["name"] = ev.value("name", "");
  e["cat"] = ev.value("cat", "");
  e["ts_ns"] = MicrosTextToNanos(ts_text);
  e["dur_ns"] = ev["ph"] == "X" ? MicrosTextToNanos(dur_text) : 0;
  e["tid"] = ev.value("tid", 0);
  json args = ev.contains("args") ? ev["args"] : json::object();
  e["args"] = args;
  for (auto& [k, v] : ev.items()) {
    if (k != "ph" && k != "name" && k != "cat" && k != "ts" && k != "dur" && k != "pid" &&
        k != "tid" && k != "args") {
      e[k] = v;
    }
  }
  return e;
}

class DifferentialImport : public ::testing::TestWithParam<uint32_t> {};

TEST_P(DifferentialImport, MatchesAnIndependentParser) {
  Generated g = RandomTrace(GetParam(), 3000);
  const std::string& text = g.text;
  const auto& times = g.times;
  json doc = json::parse(text);
  const auto& events = doc["traceEvents"];
  ASSERT_EQ(times.size(), events.size());
  for (size_t chunk : {size_t{0}, size_t{3}, size_t{61}, size_t{4096}}) {
    std::unique_ptr<Trace> trace;
    if (chunk == 0) {
      trace = testing::MustImport(text);
    } else {
      testing::TrickleInput input(text, chunk);
      auto r = LoadTraceFrom(input);
      ASSERT_TRUE(r.ok()) << r.error().message;
      trace = std::move(r.value());
    }
    ASSERT_EQ(trace->events.size(), events.size()) << "chunk " << chunk;
    for (size_t i = 0; i < events.size(); ++i) {
      json want = ExpectedEvent(events[i], times[i].first, times[i].second);
      json got = EventAsJson(*trace, i);
      ASSERT_EQ(got, want) << "event " << i << " chunk " << chunk << "\n" << events[i].dump();
    }
  }
}

// The Chrome export writes what an event shares with its template once and fills in the rest:
// every event must come back with the fields, arguments and values it was read with.
TEST_P(DifferentialImport, ExportWritesBackWhatWasRead) {
  Generated g = RandomTrace(GetParam(), 3000);
  json original = json::parse(g.text)["traceEvents"];
  auto trace = testing::MustImport(g.text);
  const std::string exported = testing::ExportText(*trace);
  json written = json::parse(exported)["traceEvents"];
  ASSERT_EQ(written.size(), original.size());
  auto without_times = [](json e) {
    e.erase("ts");
    e.erase("dur");
    return e;
  };
  for (size_t i = 0; i < original.size(); ++i) {
    ASSERT_EQ(without_times(written[i]), without_times(original[i])) << "event " << i;
  }
  auto again = testing::MustImport(exported);
  ASSERT_EQ(again->events.size(), trace->events.size());
  for (size_t i = 0; i < trace->events.size(); ++i) {
    ASSERT_EQ(EventAsJson(*again, i), EventAsJson(*trace, i)) << "event " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, DifferentialImport, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u));

}  // namespace
}  // namespace profsh
