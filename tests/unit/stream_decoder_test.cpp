// The session layer's decoder on synthetic streams written with the stream codec: no workload
// runs. Each stream uses the monotonic clock with realtime equal to it, so a tick is a
// nanosecond since the epoch and the trace's times can be read off the ticks.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session/live_session.h"
#include "engine/session/session_reader.h"
#include "engine/stream/gpu_records.h"
#include "engine/stream/stream_codec.h"
#include "test_util.h"

namespace profsh {
namespace {

namespace st = stream;
using nlohmann::json;

struct StringSink : testing::CodecSink {
  void Append(std::string_view s) { st::PutBytes(*this, s.data(), s.size()); }
};
// Writes one process's stream as the runtime would, block by block.
class StreamWriter {
 public:
  explicit StreamWriter(int64_t pid, bool windowed = false) : pid_(pid) {
    st::PutFixed(out_, st::MakeFileHeader());
    st::ProcessBlock p;
    p.pid = pid;
    p.ppid = 1;
    p.start_ns = 1000;
    p.clock_kind = st::kClockMonotonic;
    p.command_line = std::string_view("train\0--fast", 12);
    p.executable = "/bin/train";
    p.hostname = "host";
    const st::EnvVar env[] = {{"RANK", "3"}};
    p.env = env;
    p.env_count = 1;
    Add(p);
    st::ConfigBlock config;
    if (windowed) config.flags = st::kConfigSchedule | st::kConfigMarker;
    Add(config);
    Clock(1000);
  }
  template <typename Block>
  StreamWriter& Add(const Block& b) {
    st::AppendBlockTo(out_, b);
    return *this;
  }
  StreamWriter& Clock(uint64_t ticks) {
    return Add(st::ClockBlock{ticks, static_cast<int64_t>(ticks), static_cast<int64_t>(ticks)});
  }
  StreamWriter& String(uint64_t id, std::string_view text) {
    return Add(st::StringBlock{id, text});
  }
  StreamWriter& Thread(uint64_t slot, int64_t tid, std::string_view name = "") {
    return Add(st::ThreadBlock{slot, tid, name});
  }
  StreamWriter& Events(uint64_t slot, const std::vector<st::StreamEvent>& events) {
    StringSink payload;
    st::EventsHeader h{slot, events.empty() ? 0 : events.front().ticks,
                       static_cast<uint32_t>(events.size())};
    h.Encode(payload);
    uint64_t previous = h.first_ticks;
    for (const st::StreamEvent& e : events) {
      st::EncodeEvent(payload, previous, e);
      previous = e.ticks;
    }
    st::PutFixed(out_, st::BlockHeader{st::kEvents, static_cast<uint32_t>(payload.size())});
    out_.Append(payload.str());
    return *this;
  }
  StreamWriter& Step(uint64_t ticks, int64_t step, ProfilerAction action) {
    return Add(st::StepBlock{ticks, step, static_cast<uint8_t>(action)});
  }
  template <typename Record>
  StreamWriter& Gpu(const Record& record) {
    st::GpuRecord r;
    record.PackInto(&r);
    st::GpuBlockWriter<StringSink> writer(out_);
    writer.Begin();
    writer.Add(r);
    writer.End();
    return *this;
  }
  StreamWriter& End() { return Add(st::EndBlock{st::kEndExit}); }
  std::string bytes() const { return out_.str(); }
  int64_t pid() const { return pid_; }

 private:
  int64_t pid_;
  StringSink out_;
};

st::StreamEvent Push(uint64_t ticks, uint64_t name, uint64_t domain = 0) {
  st::StreamEvent e;
  e.ticks = ticks;
  e.kind = st::kPush;
  e.name = name;
  e.domain = domain;
  return e;
}
st::StreamEvent Pop(uint64_t ticks, uint64_t domain = 0) {
  st::StreamEvent e;
  e.ticks = ticks;
  e.kind = st::kPop;
  e.domain = domain;
  return e;
}
st::StreamEvent Of(st::EventKind kind, uint64_t ticks) {
  st::StreamEvent e;
  e.ticks = ticks;
  e.kind = kind;
  return e;
}

class SessionFolder {
 public:
  SessionFolder() : path_(testing::TempPath("session")) { mkdir(path_.c_str(), 0700); }
  ~SessionFolder() {
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(path_.c_str());
  }
  void Write(const StreamWriter& w, const std::string& bytes, int exec_index = 0) {
    const std::string file =
        path_ + "/" + std::to_string(w.pid()) + "-" + std::to_string(exec_index) + ".pstream";
    std::ofstream(file, std::ios::binary) << bytes;
    files_.push_back(file);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

struct Loaded {
  SessionSummary summary;
  std::vector<std::string> warnings;
  json events;  // traceEvents of the Chrome export
  std::vector<json> Named(const std::string& name) const {
    std::vector<json> out;
    for (const json& e : events) {
      if (e.value("name", "") == name && e.value("ph", "") != "M") out.push_back(e);
    }
    return out;
  }
};

Result<Loaded> Load(const std::string& path) {
  auto session = LoadSession(path);
  if (!session.ok()) return session.error();
  Loaded out;
  out.summary = session.value().summary;
  out.warnings = session.value().trace->warnings;
  out.events = json::parse(testing::ExportText(*session.value().trace))["traceEvents"];
  return out;
}

Loaded MustLoad(const std::string& path) {
  auto r = Load(path);
  if (!r.ok()) throw std::runtime_error(r.error().message);
  return std::move(r.value());
}

// ts in the export is in µs from the trace's origin (the earliest process start, 1000 ns).
double Us(uint64_t ticks) {
  return (static_cast<double>(ticks) - 1000) / 1000.0;
}

TEST(StreamDecoder, PushPopRangesNestOnTheirThreadWithNames) {
  StreamWriter w(7);
  w.String(1, "outer").String(2, "inner").Thread(0, 7).Thread(1, 8, "loader");
  w.Events(0, {Push(2000, 1), Push(3000, 2), Pop(4000), Pop(9000)});
  w.Events(1, {Push(2500, 2), Pop(2600)});
  w.Clock(10000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  ASSERT_EQ(t.Named("outer").size(), 1u);
  const json outer = t.Named("outer")[0];
  EXPECT_EQ(outer["tid"], 7);
  EXPECT_DOUBLE_EQ(outer["ts"].get<double>(), Us(2000));
  EXPECT_DOUBLE_EQ(outer["dur"].get<double>(), 7.0);
  ASSERT_EQ(t.Named("inner").size(), 2u);
  EXPECT_EQ(t.summary.ranges, 3u);
  EXPECT_EQ(t.summary.threads, 2u);
  EXPECT_EQ(t.summary.processes, 1u);
  EXPECT_EQ(t.summary.cut_streams, 0u);
  bool named_loader = false, named_process = false;
  for (const json& e : t.events) {
    if (e.value("ph", "") != "M") continue;
    if (e["name"] == "thread_name" && e["tid"] == 8) named_loader = e["args"]["name"] == "loader";
    if (e["name"] == "process_name") named_process = e["args"]["name"] == "train --fast";
  }
  EXPECT_TRUE(named_loader);
  EXPECT_TRUE(named_process);
}

TEST(StreamDecoder, StartEndRangesMatchAcrossThreadsOnLanes) {
  StreamWriter w(7);
  w.String(1, "load").String(2, "step").Thread(0, 7).Thread(1, 8);
  st::StreamEvent a = Of(st::kRangeStart, 2000);
  a.range_id = 11;
  a.name = 1;
  st::StreamEvent b = Of(st::kRangeStart, 2500);
  b.range_id = 12;
  b.name = 2;
  st::StreamEvent end_b = Of(st::kRangeEnd, 3000);
  end_b.range_id = 12;
  st::StreamEvent end_a = Of(st::kRangeEnd, 6000);
  end_a.range_id = 11;
  // The end of range 11 is written by another thread, in a block read before its start's.
  w.Events(1, {end_a});
  w.Events(0, {a, b, end_b});
  w.Clock(7000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  ASSERT_EQ(t.Named("load").size(), 1u);
  ASSERT_EQ(t.Named("step").size(), 1u);
  EXPECT_DOUBLE_EQ(t.Named("load")[0]["dur"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(t.Named("step")[0]["dur"].get<double>(), 0.5);
  // They overlap, so they take two lanes.
  EXPECT_NE(t.Named("load")[0]["tid"], t.Named("step")[0]["tid"]);
  EXPECT_EQ(t.summary.unknown_range_ends, 0u);
  EXPECT_EQ(t.summary.open_at_end, 0u);
}

TEST(StreamDecoder, ScheduleWindowsKeepOnlyRecordedSteps) {
  StreamWriter w(7, /*windowed=*/true);
  w.String(1, "work").Thread(0, 7);
  // wait=1, warmup=1, active=2: steps 0 NONE, 1 WARMUP, 2 RECORD, 3 RECORD_AND_SAVE, 4 NONE.
  w.Step(2000, 0, ProfilerAction::kNone)
      .Step(3000, 1, ProfilerAction::kWarmup)
      .Step(4000, 2, ProfilerAction::kRecord)
      .Step(5000, 3, ProfilerAction::kRecordAndSave)
      .Step(6000, 4, ProfilerAction::kNone);
  std::vector<st::StreamEvent> events;
  for (uint64_t t = 2100; t < 7000; t += 1000) {
    events.push_back(Push(t, 1));
    events.push_back(Pop(t + 500));
  }
  w.Events(0, events);
  w.Clock(8000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  // One window: steps 2 and 3.
  SessionSummary summary;
  std::vector<std::string> warnings;
  struct Sink final : WindowSink {
    std::vector<std::unique_ptr<Trace>> traces;
    std::vector<std::unique_ptr<TraceBuilder>> builders;
    std::vector<WindowInfo> sealed;
    TraceBuilder& Open(const WindowInfo&, int64_t* origin) override {
      traces.push_back(std::make_unique<Trace>());
      builders.push_back(std::make_unique<TraceBuilder>(*traces.back()));
      *origin = 0;
      return *builders.back();
    }
    void Sealed(const WindowInfo& info) override { sealed.push_back(info); }
  } sink;
  StreamDecoder decoder("synthetic", sink, summary, warnings);
  auto fed = decoder.Feed(w.bytes(), 0);
  ASSERT_TRUE(fed.ok()) << fed.error().message;
  EXPECT_EQ(fed.value(), w.bytes().size());
  decoder.Finish();
  ASSERT_EQ(sink.sealed.size(), 1u);
  EXPECT_EQ(sink.sealed[0].first_step, 2);
  EXPECT_EQ(sink.sealed[0].last_step, 3);
  EXPECT_EQ(sink.sealed[0].reason, "schedule");
  EXPECT_EQ(sink.sealed[0].begin_ns, 4000);
  EXPECT_EQ(sink.sealed[0].end_ns, 6000);
  // The ranges of steps 2 and 3 only.
  EXPECT_EQ(summary.ranges, 2u);
}

// CUPTI hands buffers back in any order: a kernel's record may be in a block before the one
// with its launch call. Loading the file still links the kernel to its launch (and so to the
// range open there).
TEST(StreamDecoder, GpuRecordsBeforeTheirLaunchCallAreLinked) {
  StreamWriter w(7);
  w.Thread(0, 7).String(1, "layer").String(2, "gemm").String(3, "cuLaunchKernel");
  w.Events(0, {Push(2000, 1), Pop(2600)});
  const st::GpuKernel kernel{
      .start = 3000, .end = 3500, .context = 1, .stream = 7, .correlation = 42, .name = 2};
  const st::GpuApi call{.start = 2100,
                        .end = 2200,
                        .tid = 7,
                        .correlation = 42,
                        .name = 3,
                        .cbid = 211,
                        .api = st::kGpuApiDriver};
  w.Gpu(kernel).Gpu(call);
  w.Clock(5000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  size_t flows = 0;
  for (const json& e : t.events) flows += e.value("cat", "") == "ac2g";
  ASSERT_EQ(t.Named("gemm").size(), 1u);
  EXPECT_EQ(flows, 2u);  // the launch's start and the kernel's finish
  // The range and its GPU projection (gpu_user_annotation), which needs the launch.
  EXPECT_EQ(t.Named("layer").size(), 2u);
}

// CUPTI names a kernel by its linkage name; Kineto writes it demangled, and so does profsh, so
// that its tables group kernels under the names torch.profiler's traces use. An extern "C"
// kernel keeps its name.
TEST(StreamDecoder, KernelNamesAreDemangledAsKinetoWritesThem) {
  StreamWriter w(7);
  w.Thread(0, 7).String(1, "_Z6vecAddPfPKfi").String(2, "scale_c").String(3, "cudaLaunchKernel");
  auto kernel = [](uint64_t start, uint64_t correlation, uint32_t name) {
    return st::GpuKernel{.start = start,
                         .end = start + 100,
                         .context = 1,
                         .stream = 7,
                         .correlation = correlation,
                         .name = name};
  };
  auto launch = [](uint64_t start, uint64_t correlation) {
    return st::GpuApi{.start = start,
                      .end = start + 50,
                      .tid = 7,
                      .correlation = correlation,
                      .name = 3,
                      .cbid = 211,
                      .api = st::kGpuApiRuntime};
  };
  w.Gpu(launch(2000, 1)).Gpu(kernel(2100, 1, 1)).Gpu(launch(2300, 2)).Gpu(kernel(2400, 2, 2));
  w.Gpu(launch(2600, 3)).Gpu(kernel(2700, 3, 1));
  w.Clock(5000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  EXPECT_EQ(t.Named("vecAdd(float*, float const*, int)").size(), 2u);
  EXPECT_EQ(t.Named("scale_c").size(), 1u);
  EXPECT_TRUE(t.Named("_Z6vecAddPfPKfi").empty());
}

// Kineto leaves the runtime's noisy queries (cudaGetDevice, ...) and the driver's queries out of
// torch.profiler's traces; so does profsh, counting them. Launches, copies and syncs stay, from
// either API.
TEST(StreamDecoder, CudaQueriesAreLeftOutAsKinetoLeavesThemOut) {
  StreamWriter w(7);
  w.Thread(0, 7)
      .String(1, "cudaGetDevice")
      .String(2, "cuDevicePrimaryCtxGetState")
      .String(3, "cudaLaunchKernel")
      .String(4, "cuMemcpyHtoD_v2")
      .String(5, "cuStreamSynchronize")
      .String(6, "cudaPeekAtLastError");
  uint64_t correlation = 0, t = 2000;
  for (uint32_t name : {1u, 2u, 3u, 4u, 5u, 6u, 1u}) {
    const bool runtime = name == 1 || name == 3 || name == 6;
    w.Gpu(st::GpuApi{.start = t,
                     .end = t + 50,
                     .tid = 7,
                     .correlation = ++correlation,
                     .name = name,
                     .cbid = 1,
                     .api = runtime ? st::kGpuApiRuntime : st::kGpuApiDriver});
    t += 100;
  }
  w.Clock(5000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t2 = MustLoad(folder.path());
  EXPECT_TRUE(t2.Named("cudaGetDevice").empty());
  EXPECT_TRUE(t2.Named("cuDevicePrimaryCtxGetState").empty());
  for (const char* kept :
       {"cudaLaunchKernel", "cuMemcpyHtoD_v2", "cuStreamSynchronize", "cudaPeekAtLastError"})
    EXPECT_EQ(t2.Named(kept).size(), 1u) << kept;
  EXPECT_EQ(t2.summary.gpu_calls, 4u);
  EXPECT_EQ(t2.summary.gpu_calls_left_out, 3u);
}

// An Event Sync or Stream Wait Event names the cudaEventRecord it waits for (its correlation)
// and that record's stream, as Kineto's wait_on_* arguments do: the last record of the same
// event in the same context before the sync's call. A sync on an event recorded before the
// recording began gets -1, as in Kineto's traces.
TEST(StreamDecoder, EventSyncsNameTheEventRecordTheyWaitFor) {
  StreamWriter w(7);
  w.Thread(0, 7)
      .String(1, "cudaEventRecord")
      .String(2, "cudaStreamWaitEvent")
      .String(3, "cudaEventSynchronize");
  auto call = [](uint64_t start, uint64_t correlation, uint32_t name) {
    return st::GpuApi{.start = start,
                      .end = start + 50,
                      .tid = 7,
                      .correlation = correlation,
                      .name = name,
                      .cbid = 1,
                      .api = st::kGpuApiRuntime};
  };
  auto record = [](uint64_t correlation, uint64_t stream, uint64_t event) {
    return st::GpuCudaEvent{
        .context = 1, .stream = stream, .correlation = correlation, .event = event};
  };
  auto sync = [](uint64_t start, uint64_t correlation, uint64_t type, uint64_t event) {
    return st::GpuSync{.start = start,
                       .end = start + 20,
                       .context = 1,
                       .stream = 9,
                       .correlation = correlation,
                       .type = type,
                       .event = event};
  };
  // Event 5 recorded on stream 7 (call 1), waited for by stream 9 (call 2); recorded again on
  // stream 8 (call 3) and synchronized (call 4). Event 6 was never recorded (call 5).
  w.Gpu(call(2000, 1, 1)).Gpu(record(1, 7, 5)).Gpu(call(2100, 2, 2)).Gpu(sync(2100, 2, 2, 5));
  w.Gpu(call(2200, 3, 1)).Gpu(record(3, 8, 5)).Gpu(call(2300, 4, 3)).Gpu(sync(2300, 4, 1, 5));
  w.Gpu(call(2400, 5, 3)).Gpu(sync(2400, 5, 1, 6));
  w.Clock(5000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> waits;
  for (const json& e : t.events) {
    if (e.value("cat", "") != "cuda_sync") continue;
    const json& a = e["args"];
    waits.emplace_back(e["name"], a.value("wait_on_stream", -9),
                       a.value("wait_on_cuda_event_record_corr_id", -9),
                       a.value("wait_on_cuda_event_id", -9));
  }
  std::sort(waits.begin(), waits.end(), [](const auto& a, const auto& b) {
    return std::get<2>(a) < std::get<2>(b) ||
           (std::get<2>(a) == std::get<2>(b) && std::get<3>(a) > std::get<3>(b));
  });
  using W = std::tuple<std::string, int64_t, int64_t, int64_t>;
  EXPECT_EQ(waits, (std::vector<W>{W{"Event Sync", -1, -1, 6}, W{"Stream Wait Event", 7, 1, 5},
                                   W{"Event Sync", 8, 3, 5}}));
  // The records themselves are no events of their own.
  EXPECT_EQ(t.Named("cudaEventRecord").size(), 2u);
}

// CUPTI hands an iteration's event records over before the syncs that wait for them: with one
// event recorded and waited for 20 times in one buffer, all 20 records are there before the
// first sync, and every sync still finds the record just before it.
TEST(StreamDecoder, EventSyncsFindTheirRecordsBehindABurstOfRecords) {
  StreamWriter w(7);
  w.Thread(0, 7).String(1, "cudaEventRecord").String(2, "cudaStreamWaitEvent");
  constexpr uint64_t kIterations = 20;
  for (uint64_t i = 0; i < kIterations; ++i) {
    const uint64_t record = 2 * i + 1, t = 2000 + 100 * i;
    w.Gpu(st::GpuApi{.start = t,
                     .end = t + 10,
                     .tid = 7,
                     .correlation = record,
                     .name = 1,
                     .cbid = 1,
                     .api = st::kGpuApiRuntime});
    w.Gpu(st::GpuCudaEvent{.context = 1, .stream = 7, .correlation = record, .event = 5});
  }
  for (uint64_t i = 0; i < kIterations; ++i) {
    const uint64_t wait = 2 * i + 2, t = 2050 + 100 * i;
    w.Gpu(st::GpuApi{.start = t,
                     .end = t + 10,
                     .tid = 7,
                     .correlation = wait,
                     .name = 2,
                     .cbid = 1,
                     .api = st::kGpuApiRuntime});
    w.Gpu(st::GpuSync{.start = t,
                      .end = t + 5,
                      .context = 1,
                      .stream = 9,
                      .correlation = wait,
                      .type = 2,
                      .event = 5});
  }
  w.Clock(9000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  size_t waits = 0, right = 0;
  for (const json& e : t.events) {
    if (e.value("cat", "") != "cuda_sync") continue;
    ++waits;
    const json& a = e["args"];
    right += a.value("wait_on_cuda_event_record_corr_id", -9) == a.value("correlation", 0) - 1 &&
             a.value("wait_on_stream", -9) == 7;
  }
  EXPECT_EQ(waits, kIterations);
  EXPECT_EQ(right, kIterations);
}

TEST(StreamDecoder, MemoryTotalsFollowTimeAcrossThreads) {
  StreamWriter w(7);
  w.Thread(0, 7).Thread(1, 8);
  auto memory = [](uint64_t ticks, int64_t bytes) {
    st::StreamEvent e = Of(st::kMemory, ticks);
    e.bytes = bytes;
    e.address = 0x1000 + ticks;
    return e;
  };
  // Thread 8's allocation comes in a later block but happened between thread 7's two.
  w.Events(0, {memory(2000, 100), memory(4000, -100)});
  w.Events(1, {memory(3000, 50)});
  w.Clock(5000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  std::map<double, int64_t> totals;
  for (const json& e : t.Named("[memory]")) totals[e["ts"]] = e["args"]["Total Allocated"];
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[Us(2000)], 100);
  EXPECT_EQ(totals[Us(3000)], 150);
  EXPECT_EQ(totals[Us(4000)], 50);
  EXPECT_EQ(t.summary.memory_peak, 150);
  EXPECT_EQ(t.summary.memory_at_end, 50);
  EXPECT_EQ(t.summary.memory_events, 3u);
}

TEST(StreamDecoder, EveryEventKindComesThrough) {
  StreamWriter w(7);
  w.String(1, "op").String(2, "[[2, 3]]").String(3, "[\"float\"]").String(4, "mark");
  w.String(5, "task").String(6, "a.py(1): f");
  w.Add(st::DomainBlock{1, st::kSourceItt, "itt domain"});
  w.Add(st::CounterBlock{9, 0, st::kCounterS64, "queue"});
  w.Thread(0, 7);
  st::StreamEvent op = Of(st::kOpBegin, 2000);
  op.name = 1;
  op.op.shapes = 2;
  op.op.dtypes = 3;
  op.op.stack = 6;
  op.op.sequence = 5;
  op.op.flops = 12;
  st::StreamEvent mark = Of(st::kMark, 2100);
  mark.name = 4;
  mark.attrs.flags = st::kAttrPayload | st::kAttrColor;
  mark.attrs.payload_type = st::kPayloadI32;
  mark.attrs.payload = static_cast<uint64_t>(int64_t{-3});
  mark.attrs.color = 0xff00ff00;
  st::StreamEvent task = Of(st::kTaskBegin, 2200);
  task.domain = 1;
  task.name = 5;
  st::StreamEvent task_end = Of(st::kTaskEnd, 2300);
  task_end.domain = 1;
  st::StreamEvent frame = Of(st::kFrameBegin, 2400);
  frame.domain = 1;
  st::StreamEvent frame_end = Of(st::kFrameEnd, 2600);
  frame_end.domain = 1;
  st::StreamEvent counter = Of(st::kCounterSet, 2700);
  counter.name = 9;
  counter.value = st::ZigZag(-42);
  w.Events(0, {op, mark, task, task_end, frame, frame_end, counter, Of(st::kPause, 2800),
               Of(st::kResume, 2900), Pop(3000), Of(st::kThreadEnd, 3100)});
  w.Clock(4000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  ASSERT_EQ(t.Named("op").size(), 1u);
  const json o = t.Named("op")[0];
  EXPECT_EQ(o["cat"], "cpu_op");
  EXPECT_EQ(o["args"]["Input Dims"], json::parse("[[2, 3]]"));
  EXPECT_EQ(o["args"]["Input type"], json::parse("[\"float\"]"));
  EXPECT_EQ(o["args"]["Sequence number"], 5);
  EXPECT_EQ(o["args"]["flops"], 12);
  EXPECT_EQ(o["args"]["Call stack"], "a.py(1): f");
  ASSERT_EQ(t.Named("mark").size(), 1u);
  EXPECT_EQ(t.Named("mark")[0]["args"]["payload"], -3);
  EXPECT_EQ(t.Named("mark")[0]["args"]["color"], "#00ff00");
  ASSERT_EQ(t.Named("task").size(), 1u);
  EXPECT_EQ(t.Named("task")[0]["cat"], "itt");
  EXPECT_EQ(t.Named("task")[0]["args"]["domain"], "itt domain");
  ASSERT_EQ(t.Named("itt domain frame").size(), 1u);
  ASSERT_EQ(t.Named("queue").size(), 1u);
  EXPECT_EQ(t.Named("queue")[0]["args"]["value"], -42);
  ASSERT_EQ(t.Named("collection paused").size(), 1u);
  EXPECT_DOUBLE_EQ(t.Named("collection paused")[0]["dur"].get<double>(), 0.1);
  EXPECT_EQ(t.summary.operators, 1u);
  EXPECT_EQ(t.summary.marks, 1u);
  EXPECT_EQ(t.summary.counter_values, 1u);
  EXPECT_EQ(t.summary.unmatched_pops, 0u);
}

TEST(StreamDecoder, ThreadExitAndKilledStreamsCloseWhatIsOpenAndSaySo) {
  StreamWriter w(7);
  w.String(1, "left open").String(2, "at exit").Thread(0, 7).Thread(1, 8);
  w.Events(1, {Push(2000, 2), Of(st::kThreadEnd, 2500)});
  w.Events(0, {Push(2000, 1), Push(2100, 1), Pop(2200)});
  w.Clock(3000);
  // No end block, and the last block is cut short by a kill.
  std::string bytes = w.bytes();
  const st::BlockHeader cut{st::kEvents, 64};
  bytes.append(reinterpret_cast<const char*>(&cut), sizeof cut);
  bytes.append("abc");
  SessionFolder folder;
  folder.Write(w, bytes);
  Loaded t = MustLoad(folder.path());
  EXPECT_EQ(t.summary.open_at_thread_exit, 1u);
  EXPECT_EQ(t.summary.open_at_end, 1u);
  EXPECT_EQ(t.summary.cut_streams, 1u);
  ASSERT_EQ(t.Named("at exit").size(), 1u);
  EXPECT_DOUBLE_EQ(t.Named("at exit")[0]["dur"].get<double>(), 0.5);
  bool said_partial = false;
  for (const std::string& warning : t.warnings)
    said_partial = said_partial || warning.find("ends in a partial block") != std::string::npos;
  EXPECT_TRUE(said_partial);
}

// A daemon's child (or any process read just after it started) may have created its stream
// and not yet drained into it: the session still loads, and the empty stream counts as cut short.
TEST(StreamDecoder, AnEmptyStreamInAFolderIsAStreamCutShort) {
  StreamWriter parent(7);
  parent.String(1, "work").Thread(0, 7);
  parent.Events(0, {Push(2000, 1), Pop(2200)});
  parent.Clock(3000).End();
  StreamWriter child(4242);
  SessionFolder folder;
  folder.Write(parent, parent.bytes());
  folder.Write(child, "");
  Loaded t = MustLoad(folder.path());
  EXPECT_EQ(t.Named("work").size(), 1u);
  EXPECT_EQ(t.summary.processes, 1u);
  EXPECT_EQ(t.summary.cut_streams, 1u);
  bool named = false;
  for (const std::string& warning : t.warnings)
    named = named || (warning.find("did not finish") != std::string::npos &&
                      warning.find("4242 (no event written yet)") != std::string::npos);
  EXPECT_TRUE(named);
}

TEST(StreamDecoder, DropsAreCountedPerSlotOccupant) {
  StreamWriter w(7);
  w.Thread(0, 7).Add(st::DropsBlock{0, 3, 5, 1}).Add(st::DropsBlock{0, 4, 5, 1});
  // A new thread in the same slot starts counting from zero again.
  w.Thread(0, 9).Add(st::DropsBlock{0, 2, 0, 0});
  w.Add(st::ProcessDropsBlock{6, 1, 2, 3});
  w.Clock(3000).End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  Loaded t = MustLoad(folder.path());
  EXPECT_EQ(t.summary.dropped_ranges, 6u);
  EXPECT_EQ(t.summary.dropped_events, 5u);
  EXPECT_EQ(t.summary.events_without_slot, 6u);
  EXPECT_EQ(t.summary.strings_refused, 1u);
  EXPECT_EQ(t.summary.metadata_refused, 2u);
  EXPECT_EQ(t.summary.events_after_close, 3u);
}

TEST(StreamDecoder, CorruptAndOldStreamsAreRefusedWithWhereAndWhy) {
  SessionFolder folder;
  {
    StreamWriter w(7);
    w.Thread(0, 7);
    // An event of an unknown kind (15), right after the events header.
    StringSink payload;
    st::EventsHeader{0, 2000, 1}.Encode(payload);
    st::PutVarintTo(payload, uint64_t{15});
    StringSink block;
    st::PutFixed(block, st::BlockHeader{st::kEvents, static_cast<uint32_t>(payload.size())});
    std::string bytes = w.bytes() + block.str() + payload.str();
    folder.Write(w, bytes);
    auto r = Load(folder.path());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("7-0.pstream: block at byte"), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("unknown event kind 15"), std::string::npos)
        << r.error().message;
  }
  {
    StreamWriter w(8);
    std::string bytes = w.bytes();
    const uint32_t other_version = st::kVersion + 1;
    std::memcpy(bytes.data() + offsetof(st::FileHeader, version), &other_version, 4);
    SessionFolder other;
    other.Write(w, bytes);
    auto r = Load(other.path());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("stream version " + std::to_string(other_version) +
                                     ", this profsh reads version " + std::to_string(st::kVersion)),
              std::string::npos)
        << r.error().message;
  }
}

TEST(StreamDecoder, HeaderSizeIsHonouredByEveryReader) {
  // A newer writer's longer header: the blocks start after header_size bytes. The stream is
  // windowed, so that the first pass over the boundaries must find them too.
  StreamWriter w(7, /*windowed=*/true);
  w.String(1, "r").Thread(0, 7);
  w.Step(1500, 0, ProfilerAction::kRecordAndSave).Step(3500, 1, ProfilerAction::kNone);
  // The second range falls after the window: it must be left out.
  w.Events(0, {Push(2000, 1), Pop(3000), Push(3600, 1), Pop(3700)}).Clock(4000).End();
  std::string bytes = w.bytes();
  st::FileHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  h.header_size = sizeof h + 8;
  std::string longer(reinterpret_cast<const char*>(&h), sizeof h);
  longer += std::string(8, '\x7f') + bytes.substr(sizeof h);
  SessionFolder folder;
  folder.Write(w, longer);
  Loaded t = MustLoad(folder.path());
  EXPECT_EQ(t.Named("r").size(), 1u);
}

TEST(StreamDecoder, LiveSessionHandsOverWhatWholeFileLoadingReads) {
  StreamWriter w(7);
  w.String(1, "r").Thread(0, 7);
  for (uint64_t t = 2000; t < 20000; t += 1000)
    w.Events(0, {Push(t, 1), Pop(t + 400)}).Clock(t + 500);
  w.End();
  SessionFolder folder;
  folder.Write(w, w.bytes());
  LiveSession live(folder.path());
  auto windows = live.Finish();
  ASSERT_TRUE(windows.ok()) << windows.error().message;
  ASSERT_EQ(windows.value().size(), 1u);
  EXPECT_EQ(live.summary().ranges, 18u);
  Loaded whole = MustLoad(folder.path());
  EXPECT_EQ(whole.summary.ranges, 18u);
}

}  // namespace
}  // namespace profsh
