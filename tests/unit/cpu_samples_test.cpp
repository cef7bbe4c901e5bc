// The cpu activity's pieces that need no workload: the samples file's blocks read back as
// written (and cut ones are refused), and samples attributed to the ranges open on their thread,
// counted into hotspots, key_averages rows and flamegraph stacks (engine/analysis/cpu_samples).
#include <gtest/gtest.h>

#include <deque>
#include <string>

#include "engine/analysis/cpu_samples.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/session/sample_reader.h"
#include "engine/stream/sample_codec.h"
#include "test_util.h"

namespace profsh {
namespace {

template <typename Block>
Block RoundTrip(const Block& block) {
  static std::deque<testing::CodecSink> written;
  testing::CodecSink& out = written.emplace_back();
  stream::AppendBlockTo(out, block);
  stream::BlockIterator blocks(out.view(), 0);
  stream::RawBlock raw;
  EXPECT_TRUE(blocks.Next(&raw));
  EXPECT_EQ(raw.type, Block::kType);
  stream::Cursor c(raw.payload);
  Block back;
  EXPECT_TRUE(back.Decode(c));
  EXPECT_TRUE(c.AtEnd());
  for (size_t n = 0; n < raw.payload.size(); ++n) {
    stream::Cursor cut(raw.payload.substr(0, n));
    Block partial;
    EXPECT_FALSE(partial.Decode(cut)) << "payload cut at " << n;
  }
  return back;
}

TEST(SampleCodec, BlocksReadBackAsWritten) {
  stream::SampleConfigBlock config;
  config.method = stream::kSampleTimer;
  config.rate_hz = 999;
  config.stack_bytes = 8192;
  config.note = "perf_event_open: denied";
  auto c = RoundTrip(config);
  EXPECT_EQ(c.method, stream::kSampleTimer);
  EXPECT_EQ(c.rate_hz, 999u);
  EXPECT_EQ(c.note, "perf_event_open: denied");

  stream::SampleTaskBlock task;
  task.kind = stream::kTaskFork;
  task.pid = 20;
  task.tid = 20;
  task.parent_pid = 10;
  task.parent_tid = 11;
  task.time_ns = 123;
  auto t = RoundTrip(task);
  EXPECT_EQ(t.parent_pid, 10);
  EXPECT_EQ(t.time_ns, 123u);

  stream::SampleMappingBlock map;
  map.pid = 7;
  map.start = 0x400000;
  map.length = 0x1000;
  map.file_offset = 0x2000;
  map.executable = 1;
  map.path = "/usr/lib/libx.so";
  map.build_id = "abcd";
  auto m = RoundTrip(map);
  EXPECT_EQ(m.start, 0x400000u);
  EXPECT_EQ(m.path, "/usr/lib/libx.so");
  EXPECT_EQ(m.build_id, "abcd");

  const uint64_t regs[3] = {11, 22, 33};
  stream::SampleBlock sample;
  sample.pid = 7;
  sample.tid = 8;
  sample.time_ns = 99;
  sample.regs_mask = (1u << 6) | (1u << 7) | (1u << 8);  // BP, SP, IP
  sample.regs = regs;
  sample.stack = std::string_view("\x01\x02\x03\x04", 4);
  sample.weight = 4;
  auto s = RoundTrip(sample);
  EXPECT_EQ(s.decoded_regs[6], 11u);
  EXPECT_EQ(s.decoded_regs[7], 22u);
  EXPECT_EQ(s.decoded_regs[8], 33u);
  EXPECT_EQ(s.stack.size(), 4u);
  EXPECT_EQ(s.weight, 4u);

  auto d = RoundTrip(stream::SampleDropsBlock{1, 2, 3});
  EXPECT_EQ(d.lost + d.throttled + d.dropped, 6u);
}

TEST(SampleCodec, RefusesRegistersBeyondPerfsAndAZeroWeight) {
  const uint64_t regs[1] = {1};
  stream::SampleBlock sample;
  sample.regs_mask = uint64_t{1} << 30;
  sample.regs = regs;
  testing::CodecSink out;
  stream::AppendBlockTo(out, sample);
  stream::Cursor c(out.view().substr(sizeof(stream::BlockHeader)));
  stream::SampleBlock back;
  EXPECT_FALSE(back.Decode(c));
  sample.regs_mask = 0;
  sample.weight = 0;
  testing::CodecSink out2;
  stream::AppendBlockTo(out2, sample);
  stream::Cursor c2(out2.view().substr(sizeof(stream::BlockHeader)));
  EXPECT_FALSE(back.Decode(c2));
}

// Thread 1: "step" (NVTX) [0, 100) holding "aten::mm" (an operator) [10, 50); thread 2 nothing.
// Samples (µs): 5 in step; 20 and 30 in aten::mm; 120 outside; one on thread 2 of weight 3.
const char* const kTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "nvtx", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 40},
  {"ph": "i", "s": "t", "cat": "cpu_sample", "name": "b", "pid": 1, "tid": 1, "ts": 5,
   "args": {"stack": "main;a;b", "modules": "exe;exe;libx.so", "weight": 1}},
  {"ph": "i", "s": "t", "cat": "cpu_sample", "name": "gemm", "pid": 1, "tid": 1, "ts": 20,
   "args": {"stack": "main;a;gemm", "modules": "exe;exe;libblas.so", "weight": 1}},
  {"ph": "i", "s": "t", "cat": "cpu_sample", "name": "gemm", "pid": 1, "tid": 1, "ts": 30,
   "args": {"stack": "main;a;gemm", "modules": "exe;exe;libblas.so", "weight": 1}},
  {"ph": "i", "s": "t", "cat": "cpu_sample", "name": "a", "pid": 1, "tid": 1, "ts": 120,
   "args": {"stack": "main;a;a", "modules": "exe;exe;exe", "weight": 1}},
  {"ph": "i", "s": "t", "cat": "cpu_sample", "name": "spin", "pid": 1, "tid": 2, "ts": 30,
   "args": {"stack": "start;spin", "modules": "libc.so;exe", "weight": 3}}
]})";

TEST(CpuSamples, AttributedToTheRangesOpenOnTheirThread) {
  auto trace = testing::MustImport(kTrace);
  CpuSamples s = CollectCpuSamples(*trace);
  ASSERT_EQ(s.samples.size(), 5u);
  auto str = [&](uint32_t id) { return std::string(s.strings.Get(id)); };
  // Thread 1 first, in time order.
  EXPECT_EQ(str(s.samples[0].nvtx), "step");
  EXPECT_EQ(str(s.samples[0].op), "");
  EXPECT_EQ(str(s.samples[1].op), "aten::mm");
  EXPECT_EQ(str(s.samples[1].nvtx), "step");
  EXPECT_EQ(str(s.samples[1].range_path), "step;aten::mm");
  EXPECT_EQ(str(s.samples[3].range_path), "");  // after both ended
  EXPECT_EQ(str(s.samples[4].range_path), "");  // another thread's ranges never count
  EXPECT_EQ(s.samples[4].weight, 3u);
}

TEST(CpuSamples, HotspotsBottomUpAndTopDown) {
  auto trace = testing::MustImport(kTrace);
  CpuSamples s = CollectCpuSamples(*trace);
  uint64_t kept = 0;
  auto rows = ComputeHotspots(s, HotspotOptions{HotspotKey::kFunction, ""}, &kept).value();
  EXPECT_EQ(kept, 7u);  // weights
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "spin");
  EXPECT_EQ(rows[0].self, 3u);
  EXPECT_EQ(rows[0].module, "exe");
  auto find = [&](const std::string& name) {
    for (const HotspotRow& r : rows) {
      if (r.name == name) return r;
    }
    return HotspotRow{};
  };
  EXPECT_EQ(find("gemm").self, 2u);
  EXPECT_EQ(find("a").self, 1u);
  EXPECT_EQ(find("a").total, 4u);  // once per sample, though "main;a;a" holds it twice
  EXPECT_EQ(find("main").total, 4u);
  EXPECT_EQ(find("main").self, 0u);

  auto modules = ComputeHotspots(s, HotspotOptions{HotspotKey::kModule, ""}, &kept).value();
  EXPECT_EQ(modules[0].name, "exe");
  auto ranges = ComputeHotspots(s, HotspotOptions{HotspotKey::kRange, "step"}, &kept).value();
  EXPECT_EQ(kept, 3u);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].name, "aten::mm");
  EXPECT_EQ(ranges[0].self, 2u);
  EXPECT_EQ(ranges[1].name, "step");
  EXPECT_EQ(ranges[1].self, 1u);
  EXPECT_EQ(ranges[1].total, 3u);
}

TEST(CpuSamples, KeyAveragesCountSelfAndTotalSamples) {
  auto trace = testing::MustImport(kTrace);
  std::shared_ptr<const FunctionEvents> events = BuildFunctionEvents(*trace);
  const EventSampleCounts counts = CountSamplesPerEvent(*trace, *events);
  KeyAverages a = ComputeKeyAverages(events, false, 0, std::nullopt, &counts);
  ASSERT_TRUE(a.has_samples);
  int seen = 0;
  for (const AverageRow& r : a.rows) {
    const std::string key(events->strings.Get(r.key));
    if (key == "step") {
      EXPECT_EQ(r.self_cpu_samples, 1);
      EXPECT_EQ(r.cpu_samples, 3);
      ++seen;
    } else if (key == "aten::mm") {
      EXPECT_EQ(r.self_cpu_samples, 2);
      EXPECT_EQ(r.cpu_samples, 2);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
  // Without samples the rows carry none, and the table keeps torch's columns.
  auto plain = testing::MustImport(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x", "pid": 1, "tid": 1,
          "ts": 0, "dur": 1}]})");
  std::shared_ptr<const FunctionEvents> e2 = BuildFunctionEvents(*plain);
  const EventSampleCounts none = CountSamplesPerEvent(*plain, *e2);
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(ComputeKeyAverages(e2, false, 0, std::nullopt, &none).has_samples);
}

}  // namespace
}  // namespace profsh

// The Python frames of a sample go in at the eval-loop frames (sample_reader.h's rule): one per
// outer eval loop, the rest at the innermost, native frames called from Python after them.
namespace profsh {
namespace {

std::string Spliced(const std::vector<std::string>& native, const std::vector<std::string>& py,
                    std::string* modules = nullptr) {
  std::vector<const std::string*> frames;
  for (const std::string& p : py) frames.push_back(&p);
  std::vector<std::string> mods(native.size(), "m"), names, out_mods;
  if (!SpliceWithPython(native, mods, frames, names, out_mods)) return "(unchanged)";
  std::string s, m;
  for (size_t i = 0; i < names.size(); ++i) {
    s += (i ? ";" : "") + names[i];
    m += (i ? ";" : "") + out_mods[i];
  }
  if (modules) *modules = m;
  return s;
}

TEST(PythonFrames, OneEvalLoopTakesAllPythonFramesBelowTheNativeOnesPythonCalled) {
  std::string modules;
  EXPECT_EQ(Spliced({"main", "PyEval_EvalCode", "_PyEval_EvalFrameDefault", "at::mm", "sgemm_"},
                    {"t.py(1): <module>", "t.py(4): step"}, &modules),
            "main;PyEval_EvalCode;_PyEval_EvalFrameDefault;t.py(1): <module>;t.py(4): step;"
            "at::mm;sgemm_");
  EXPECT_EQ(modules, "m;m;m;[python];[python];m;m");
}

TEST(PythonFrames, OuterEvalLoopsTakeOneFrameEachTheInnermostTheRest) {
  EXPECT_EQ(Spliced({"main", "_PyEval_EvalFrameDefault", "builtin_map", "_PyEval_EvalFrameDefault",
                     "long_add"},
                    {"a", "b", "c"}),
            "main;_PyEval_EvalFrameDefault;a;builtin_map;_PyEval_EvalFrameDefault;b;c;long_add");
  // More eval loops than Python frames: the inner ones get none.
  EXPECT_EQ(Spliced({"_PyEval_EvalFrameDefault", "x", "_PyEval_EvalFrameDefault", "y",
                     "_PyEval_EvalFrameDefault"},
                    {"a"}),
            "_PyEval_EvalFrameDefault;a;x;_PyEval_EvalFrameDefault;y;_PyEval_EvalFrameDefault");
}

TEST(PythonFrames, NoEvalLoopLeavesTheStack) {
  EXPECT_EQ(Spliced({"main", "python3.11+0x1234", "sgemm_"}, {"a"}), "(unchanged)");
  EXPECT_TRUE(IsEvalLoopFrame("_PyEval_EvalFrameDefault"));
  EXPECT_FALSE(IsEvalLoopFrame("PyEval_EvalCode"));
}

}  // namespace
}  // namespace profsh
