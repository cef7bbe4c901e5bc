#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include "engine/analysis/function_events.h"
#include "engine/flamegraph/flame_layout.h"
#include "engine/flamegraph/flame_svg.h"
#include "engine/flamegraph/folded_stacks.h"
#include "engine/flamegraph/trace_stacks.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

using Stack = std::vector<std::string>;

std::vector<std::pair<Stack, double>> Contents(const FoldedStacks& s) {
  std::vector<std::pair<Stack, double>> out;
  for (size_t i = 0; i < s.size(); ++i) {
    Stack names;
    for (uint32_t id : s.frames(i)) names.emplace_back(s.frame_name(id));
    out.emplace_back(names, s.count(i));
  }
  return out;
}

FoldedStacks ParseOk(const std::string& text) {
  auto r = FoldedStacks::Parse(text, "test.folded");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r.value()) : FoldedStacks();
}

TEST(FoldedStacks, ParsesLinesCountsAndSkipsWhatIsNotAStack) {
  FoldedStacks s =
      ParseOk("main;load;parse 40\r\nmain 2.5\n\nno count here\nmain;x y\n  \nidle\t7\n");
  auto c = Contents(s);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].first, (Stack{"main", "load", "parse"}));
  EXPECT_EQ(c[0].second, 40);
  EXPECT_EQ(c[1].second, 2.5);
  EXPECT_EQ(c[2].first, (Stack{"idle"}));
  EXPECT_EQ(s.ignored_lines(), 3u);
  EXPECT_FALSE(s.differential());
  EXPECT_EQ(s.total(), 49.5);
}

TEST(FoldedStacks, NamesTheFileWhenThereIsNoStack) {
  auto empty = FoldedStacks::Parse("", "in.folded");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("in.folded: no stack lines"), std::string::npos);
  auto junk = FoldedStacks::Parse("hello\nworld\n", "junk.folded");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().message.find("2 lines did not match"), std::string::npos);
}

TEST(FoldedStacks, TwoCountsMakeADifferentialProfile) {
  FoldedStacks s = ParseOk("a;b 7\na;c 3 5\n");
  ASSERT_TRUE(s.differential());
  EXPECT_EQ(s.before(0), 0);  // a plain line read before the first differential one
  EXPECT_EQ(s.count(0), 7);
  EXPECT_EQ(s.before(1), 3);
  EXPECT_EQ(s.count(1), 5);
}

TEST(FoldedStacks, SortOrdersFrameByFrameAndMergesEqualStacks) {
  FoldedStacks s = ParseOk("b;x 1\na 2\na;c 3\na 4\nab 1\na.x;q 1\n");
  s.Sort();
  auto c = Contents(s);
  std::vector<std::pair<Stack, double>> want = {
      {{"a"}, 6}, {{"a", "c"}, 3}, {{"a.x", "q"}, 1}, {{"ab"}, 1}, {{"b", "x"}, 1}};
  EXPECT_EQ(c, want);
}

// The radix passes pack a few frames per key; deep stacks sharing long prefixes need many
// passes. The order must equal a plain sort of the name lists.
TEST(FoldedStacks, SortMatchesAPlainSortOnDeepStacks) {
  std::mt19937 rng(7);
  std::vector<std::string> names;
  char name[16];
  for (int i = 0; i < 300; ++i) {
    std::snprintf(name, sizeof name, "f%u", static_cast<unsigned>(rng() % 100000));
    names.emplace_back(name);
  }
  std::string text;
  std::map<Stack, double> want;
  Stack previous;
  for (int i = 0; i < 3000; ++i) {
    Stack st(previous.begin(), previous.begin() + std::min<size_t>(previous.size(), rng() % 25));
    size_t depth = 1 + rng() % 30;
    while (st.size() < depth) st.push_back(names[rng() % names.size()]);
    double count = 1 + rng() % 9;
    for (size_t k = 0; k < st.size(); ++k) {
      if (k > 0) text += ';';
      text += st[k];
    }
    text += ' ';
    text += std::to_string(static_cast<int>(count));
    text += '\n';
    want[st] += count;
    previous = st;
  }
  FoldedStacks s = ParseOk(text);
  s.Sort();
  std::vector<std::pair<Stack, double>> expected(want.begin(), want.end());
  EXPECT_EQ(Contents(s), expected);
}

TEST(FoldedStacks, StreamsGzipAcrossChunkBoundaries) {
  std::string text;
  for (int i = 0; i < 90000; ++i) {
    text += "main;worker_" + std::to_string(i % 97) + ";step_" + std::to_string(i % 1013) + " " +
            std::to_string(i % 50 + 1) + "\n";
  }
  text += "last;line_without_newline 9";
  std::string path = testing::TempPath("stacks.folded.gz");
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(gz);
  auto loaded = FoldedStacks::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_GT(text.size(), 2u << 20);  // several 1 MB chunks
  EXPECT_EQ(Contents(loaded.value()), Contents(ParseOk(text)));
  std::remove(path.c_str());
}

TEST(FoldedStacks, LoadsPlainFilesLargerThanTheReleaseWindow) {
  std::string text;
  for (int i = 0; i < 400000; ++i) text += "a;b" + std::to_string(i % 5000) + ";c 1\n";
  std::string path = testing::TempPath("big.folded");
  std::ofstream(path) << text;
  auto loaded = FoldedStacks::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded.value().size(), 400000u);
  EXPECT_EQ(loaded.value().total(), 400000);
  std::remove(path.c_str());
}

TEST(FoldedStacks, DifferenceKeepsBothValuesPerStack) {
  FoldedStacks before = ParseOk("a;b 10\na;c 10\n");
  FoldedStacks after = ParseOk("a;b 30\na;d 5\n");
  FoldedStacks d = FoldedStacks::Difference(before, after, false);
  ASSERT_TRUE(d.differential());
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.before(0), 10);
  EXPECT_EQ(d.count(0), 30);  // a;b
  EXPECT_EQ(d.before(1), 10);
  EXPECT_EQ(d.count(1), 0);  // a;c
  EXPECT_EQ(d.before(2), 0);
  EXPECT_EQ(d.count(2), 5);  // a;d
  FoldedStacks n = FoldedStacks::Difference(before, after, true);
  EXPECT_DOUBLE_EQ(n.before(0), 10 * 35.0 / 20.0);
}

TEST(FlameLayout, FramesCoverTheirChildrenAndNarrowOnesArePruned) {
  FoldedStacks s = ParseOk("m;a;x 40\nm;a;y 25\nm;b 1\nm 10\nidle 24\n");
  s.Sort();
  FlameLayout layout = LayoutFlames(s, 2.0);
  EXPECT_EQ(layout.total, 100);
  std::map<std::string, FlameFrame> by_name;
  for (const FlameFrame& f : layout.frames) by_name[std::string(f.name)] = f;
  ASSERT_EQ(by_name.count("b"), 0u);    // 1 < 2: pruned
  ASSERT_EQ(layout.frames.size(), 6u);  // root, idle, m, a, x, y
  EXPECT_EQ(by_name[""].value, 100);
  EXPECT_EQ(by_name["m"].value, 76);
  EXPECT_EQ(by_name["m"].start, 24);       // "idle" sorts first
  EXPECT_EQ(by_name["a"].start, 24 + 10);  // m's own samples come before its children
  EXPECT_EQ(by_name["y"].start, by_name["x"].start + 40);
  EXPECT_EQ(by_name["x"].depth, 3u);
  EXPECT_EQ(layout.max_depth, 3u);
  for (size_t i = 1; i < layout.frames.size(); ++i) {
    const FlameFrame &p = layout.frames[i - 1], &f = layout.frames[i];
    EXPECT_TRUE(p.depth < f.depth || (p.depth == f.depth && p.start < f.start));
  }
}

TEST(FlameLayout, DifferentialFramesCarryTheirOwnChange) {
  FoldedStacks d =
      FoldedStacks::Difference(ParseOk("a;b 10\na 4\n"), ParseOk("a;b 30\na 1\n"), false);
  d.Sort();
  FlameLayout layout = LayoutFlames(d, 0);
  ASSERT_TRUE(layout.differential);
  for (const FlameFrame& f : layout.frames) {
    if (f.name == "b") {
      EXPECT_EQ(f.delta, 20);
    } else if (f.name == "a") {
      EXPECT_EQ(f.delta, -3);
    }
  }
  EXPECT_EQ(layout.max_delta, 20);
}

std::string Op(const std::string& name, int64_t ts, int64_t dur, const std::string& args = "",
               const std::string& cat = "cpu_op") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name +
         R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + (args.empty() ? "" : R"(, "args": {)" + args + "}") + "}";
}

// A forward op with a stack and a kernel launch inside it; its backward node (linked by
// sequence number) inside torch's evaluate_function wrapper; AccumulateGrad, which has no
// forward op; an op recorded without a stack outside everything.
const char* const kForwardStack = R"("Call stack": "train.py(10): step;train.py(20): <module>")";
std::string TraceWithBackward() {
  return std::string(R"({"traceEvents": [)") +
         Op("aten::addmm", 0, 100, std::string(kForwardStack) + R"(, "Sequence number": 5)") + "," +
         Op("cudaLaunchKernel", 10, 20, "", "cuda_runtime") + "," +
         Op("autograd::engine::evaluate_function: AddmmBackward0", 200, 50) + "," +
         Op("AddmmBackward0", 205, 40, R"("Sequence number": 5)") + "," + Op("aten::mm", 210, 30) +
         "," + Op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 300, 20) +
         "," + Op("torch::autograd::AccumulateGrad", 302, 15) + "," + Op("aten::empty", 400, 8) +
         "]}";
}

TEST(TraceStacks, PythonStacksAddUpToTheOperatorsTotal) {
  auto trace = testing::MustImport(TraceWithBackward());
  auto events = BuildFunctionEvents(*trace);
  TraceStackOptions options;
  options.source = StackSource::kPython;
  StackCoverage coverage;
  auto stacks = TraceStacks(*trace, *events, options, &coverage);
  ASSERT_TRUE(stacks.ok()) << stacks.error().message;
  std::map<Stack, double> got;
  for (const auto& [stack, value] : Contents(stacks.value())) got[stack] += value;
  const Stack forward = {"train.py(20):_<module>", "train.py(10):_step"};
  // addmm's 80 us, its launch's 20 (under the op it ran in), the node's 10 and the mm's 30
  // (backward, under the forward op's stack through the sequence number).
  EXPECT_EQ(got[forward], 140);
  EXPECT_EQ(got[(Stack{"[backward]", "autograd::engine::evaluate_function: AddmmBackward0"})], 10);
  EXPECT_EQ(got[(Stack{"[backward]", "torch::autograd::AccumulateGrad"})], 15);
  EXPECT_EQ(got[(Stack{"[backward]",
                       "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"})],
            5);
  EXPECT_EQ(got[(Stack{"[no Python stack]", "aten::empty"})], 8);
  EXPECT_EQ(got.size(), 5u);
  EXPECT_EQ(stacks.value().total(), 178);  // every event's self time: the operators' total
  EXPECT_EQ(coverage.total, 178);
  EXPECT_EQ(coverage.inherited_events, 1u);
  EXPECT_EQ(coverage.backward_events, 3u);
  EXPECT_EQ(coverage.backward, 30);
  EXPECT_EQ(coverage.unstacked_events, 1u);
  EXPECT_EQ(DescribeStackCoverage(coverage, "us"),
            "3 events of backward code that no forward stack reached (30 us, 16.9 %) under "
            "[backward]; 1 event without a Python stack (8 us, 4.5 %) under [no Python stack]");
}

TEST(TraceStacks, FractionsOfAUnitAreKept) {
  // torch's export_stacks truncates each event to whole microseconds (0 here); the graph sums.
  auto trace = testing::MustImport(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0,)"
      R"( "dur": 0.6, "args": {"Call stack": "x.py(1): f"}}, {"ph": "X", "cat": "cpu_op",)"
      R"( "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 0.6, "args": {"Call stack": "x.py(1): f"}}]})");
  auto events = BuildFunctionEvents(*trace);
  auto stacks = TraceStacks(*trace, *events, TraceStackOptions{});
  ASSERT_TRUE(stacks.ok());
  EXPECT_DOUBLE_EQ(stacks.value().total(), 1.2);
}

TEST(FlameSvg, ADeepNarrowStackIsPrunedByDefault) {
  // 104 frames at 0.1 % of the total beside a two-frame graph: flamegraph.pl's 0.1-pixel floor
  // keeps them and the SVG grows 104 frames tall; the default (0.2 % of the total) does not.
  std::string text = "main;work 9990\n";
  std::string deep;
  for (int k = 0; k < 104; ++k) {
    if (k > 0) deep += ';';
    deep += "importlib_" + std::to_string(k);
  }
  text += deep + " 10\n";
  auto height_of = [](const std::string& svg) {
    const size_t at = svg.find(" height=\"");
    return std::atof(svg.c_str() + at + 9);
  };
  FoldedStacks stacks = ParseOk(text);
  std::string svg;
  FlameOptions options;
  auto summary = RenderFlamegraph(stacks, options, &svg);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary.value().frames_drawn, 3u);  // all, main, work
  EXPECT_EQ(summary.value().total, 10000);
  EXPECT_LT(height_of(svg), 5 * options.frame_height + 100);
  EXPECT_EQ(svg.find("importlib_0"), std::string::npos);

  FlameOptions pl = options;
  pl.min_width = 0.1;
  pl.min_width_percent = false;
  FoldedStacks again = ParseOk(text);
  ASSERT_TRUE(RenderFlamegraph(again, pl, &svg).ok());
  EXPECT_GT(height_of(svg), 104 * pl.frame_height);
}

}  // namespace
}  // namespace profsh
