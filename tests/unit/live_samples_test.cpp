// LiveSamples (engine/session/live_samples.h) on samples files written bit by bit, as the
// samplers write them: a sample is placed only once its file vouches for its time (a later clock
// block) and its process's windows are known up to it, into the window it falls in; the others
// are counted; a window is ready once its file has been placed past its end.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "engine/session/live_samples.h"
#include "engine/stream/stream_format.h"
#include "test_util.h"

namespace profsh {
namespace {

namespace st = stream;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kRealMinusMono = 1'700'000'000'000'000'000;

// A samples file whose blocks reach the disk only at Write().
class SamplesFile {
 public:
  SamplesFile(std::string path, uint8_t method) : path_(std::move(path)) {
    st::FileHeader header{};
    std::memcpy(header.magic, st::kMagic, sizeof header.magic);
    header.version = st::kVersion;
    header.header_size = sizeof header;
    st::PutFixed(out_, header);
    Clock(0);
    st::SampleConfigBlock config;
    config.method = method;
    config.rate_hz = 999;
    st::AppendBlockTo(out_, config);
    Write();
  }
  // Every sample before `mono` has been written.
  void Clock(int64_t mono) {
    st::AppendBlockTo(out_,
                      st::ClockBlock{static_cast<uint64_t>(mono), mono, mono + kRealMinusMono});
  }
  void Sample(int64_t mono, int64_t pid) {
    st::SampleBlock s;
    s.pid = pid;
    s.tid = pid;
    s.time_ns = static_cast<uint64_t>(mono);
    st::AppendBlockTo(out_, s);
  }
  void Write() {
    std::ofstream(path_, std::ios::binary | std::ios::app) << out_.str();
    out_ = testing::CodecSink{};
  }

 private:
  std::string path_;
  testing::CodecSink out_;
};

class LiveSamplesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(mkdir(folder_.c_str(), 0700), 0); }
  void TearDown() override {
    for (const char* name : {"cpu-samples-100-0.psamples", "cpu-samples.psamples"})
      unlink((folder_ + "/" + name).c_str());
    rmdir(folder_.c_str());
  }
  WindowInfo Window(int64_t pid, int64_t begin_ms) {
    WindowInfo w;
    w.pid = pid;
    w.begin_ns = kRealMinusMono + begin_ms * kMs;
    return w;
  }
  size_t Emit(LiveSamples& live, const WindowInfo& w) {
    Trace t;
    TraceBuilder b(t);
    live.Emit(w, b, w.begin_ns);
    EXPECT_TRUE(b.Finish().ok());
    return t.events.size();
  }

  std::string folder_ = testing::TempPath("live_samples");
  SessionSummary summary_;
  std::vector<std::string> warnings_;
};

TEST_F(LiveSamplesTest, PlacesSamplesOnceTheirTimeAndTheirWindowsAreKnown) {
  LiveSamples live(folder_, summary_, warnings_);
  SamplesFile file(folder_ + "/cpu-samples-100-0.psamples", st::kSampleTimer);
  WindowInfo w = Window(100, 10);
  live.WindowOpened(w);
  int64_t known = kRealMinusMono + 15 * kMs;
  auto until = [&](int64_t pid) -> std::optional<int64_t> {
    if (pid == 100) return known;
    return std::nullopt;
  };
  for (int64_t ms : {5, 12, 14, 18, 25}) file.Sample(ms * kMs, 100);
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.samples_outside_windows, 0u) << "no clock block vouches for them yet";
  EXPECT_NE(live.method().find("timer"), std::string::npos) << live.method();

  file.Clock(30 * kMs);
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.samples_outside_windows, 1u) << "5 ms: before the window";
  w.end_ns = kRealMinusMono + 20 * kMs;
  live.WindowEnded(w);
  EXPECT_FALSE(live.Ready(w)) << "18 ms waits for the stream to know its windows";

  known = kRealMinusMono + 26 * kMs;
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.samples_outside_windows, 2u) << "25 ms: after the window's end";
  EXPECT_TRUE(live.Ready(w));
  EXPECT_EQ(Emit(live, w), 3u) << "12, 14 and 18 ms";
  EXPECT_EQ(summary_.cpu_samples, 3u);

  // A sample of the window's span written after it was handed over is late, not outside.
  file.Sample(16 * kMs, 100);
  file.Clock(40 * kMs);
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.late_events, 1u);
  EXPECT_EQ(summary_.samples_outside_windows, 2u);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(LiveSamplesTest, ProcessesWithoutStreamAndTheEndOfTheRun) {
  LiveSamples live(folder_, summary_, warnings_);
  SamplesFile file(folder_ + "/cpu-samples.psamples", st::kSamplePerfCpuClock);
  WindowInfo w = Window(100, 0);
  live.WindowOpened(w);
  auto until = [&](int64_t pid) -> std::optional<int64_t> {
    if (pid == 100) return kRealMinusMono + 50 * kMs;
    return std::nullopt;  // pid 200 has no stream (yet)
  };
  file.Sample(10 * kMs, 200);
  file.Sample(20 * kMs, 100);
  file.Sample(60 * kMs, 100);
  file.Clock(100 * kMs);
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.samples_outside_windows, 0u) << "pid 200's stream may still show up";
  w.end_ns = kRealMinusMono + 70 * kMs;
  live.WindowEnded(w);
  EXPECT_FALSE(live.Ready(w));
  // Two seconds later pid 200 still has no stream: its sample is in no window.
  file.Clock(2100 * kMs);
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.samples_outside_windows, 1u);
  EXPECT_FALSE(live.Ready(w)) << "60 ms waits for pid 100's windows";
  // The run is over: everything is placed.
  ASSERT_TRUE(live.Read(until, true).ok());
  EXPECT_TRUE(live.Ready(w));
  EXPECT_EQ(Emit(live, w), 2u);
  EXPECT_NE(live.method().find("perf_event_open"), std::string::npos) << live.method();
}

TEST_F(LiveSamplesTest, AStalledStreamDoesNotHoldOtherProcessesBack) {
  LiveSamples live(folder_, summary_, warnings_);
  SamplesFile file(folder_ + "/cpu-samples.psamples", st::kSamplePerfCpuClock);
  WindowInfo w = Window(200, 0);
  live.WindowOpened(w);
  auto until = [&](int64_t pid) -> std::optional<int64_t> {
    if (pid == 100) return kRealMinusMono + 10 * kMs;  // killed: its stream says no more
    if (pid == 200) return kRealMinusMono + 100 * kMs;
    return std::nullopt;
  };
  file.Sample(20 * kMs, 100);
  file.Sample(30 * kMs, 200);
  file.Clock(50 * kMs);
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  w.end_ns = kRealMinusMono + 40 * kMs;
  live.WindowEnded(w);
  EXPECT_FALSE(live.Ready(w)) << "pid 100's sample comes first and its windows may yet be known";
  sleep(2);
  usleep(100000);
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_EQ(summary_.samples_outside_windows, 1u) << "pid 100's stream stopped 2 s ago";
  EXPECT_TRUE(live.Ready(w));
  EXPECT_EQ(Emit(live, w), 1u);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(LiveSamplesTest, AProcessFileIsWholeOnceItsStreamEnded) {
  LiveSamples live(folder_, summary_, warnings_);
  SamplesFile file(folder_ + "/cpu-samples-100-0.psamples", st::kSampleTimer);
  WindowInfo w = Window(100, 10);
  live.WindowOpened(w);
  std::optional<int64_t> known = kRealMinusMono + 100 * kMs;
  auto until = [&](int64_t) { return known; };
  file.Sample(12 * kMs, 100);
  file.Clock(20 * kMs);  // the timers' last round: the process exits inside its window
  file.Write();
  ASSERT_TRUE(live.Read(until, false).ok());
  w.end_ns = kRealMinusMono + 50 * kMs;
  live.WindowEnded(w);
  EXPECT_FALSE(live.Ready(w)) << "the file vouches for 20 ms only";
  known = INT64_MAX;  // the stream's end: written after the timers' last samples
  ASSERT_TRUE(live.Read(until, false).ok());
  EXPECT_TRUE(live.Ready(w)) << "no 10 s wait for samples that cannot come";
  EXPECT_EQ(Emit(live, w), 1u);
  EXPECT_TRUE(warnings_.empty());
}

}  // namespace
}  // namespace profsh
