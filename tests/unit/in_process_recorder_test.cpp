// The in-process recorder against torch.profiler's profile object: its windows are compared
// with a model of torch's own transition table (torch/profiler/profiler.py, action_map), written
// here independently of the window rule the recorder applies.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/recording/in_process_recorder.h"

namespace profsh {
namespace {

using A = ProfilerAction;

struct Window {
  int64_t first, last;
  bool operator==(const Window&) const = default;
};

std::string Describe(const std::vector<Window>& windows) {
  std::ostringstream s;
  for (const Window& w : windows) s << "[" << w.first << "," << w.last << "] ";
  return s.str();
}

// torch's profile: start() transits from NONE to schedule(0), step() from the current action to
// schedule(step_num + 1), stop() from the current action to None. start_trace begins a window
// at the step being entered; trace_ready hands over the window, whose last step is the one
// being left.
class TorchModel {
 public:
  explicit TorchModel(std::optional<Schedule> s) : schedule_(s) {}
  void Start() {
    action_ = Action(0);
    Transit(A::kNone, action_, false);
  }
  void Step() {
    const A prev = action_;
    ++step_;
    action_ = Action(step_);
    Transit(prev, action_, false);
  }
  void Stop() { Transit(action_, A::kNone, true); }
  const std::vector<Window>& windows() const { return windows_; }

 private:
  enum Op { kStartTrace, kTraceReady };
  A Action(int64_t step) const { return schedule_ ? schedule_->Action(step) : A::kRecord; }
  void Transit(A from, A to, bool exiting) {
    static const std::map<std::pair<A, A>, std::vector<Op>> kMap = {
        {{A::kNone, A::kRecord}, {kStartTrace}},
        {{A::kNone, A::kRecordAndSave}, {kStartTrace}},
        {{A::kWarmup, A::kRecord}, {kStartTrace}},
        {{A::kWarmup, A::kRecordAndSave}, {kStartTrace}},
        {{A::kRecord, A::kNone}, {kTraceReady}},
        {{A::kRecord, A::kWarmup}, {kTraceReady}},
        {{A::kRecordAndSave, A::kNone}, {kTraceReady}},
        {{A::kRecordAndSave, A::kWarmup}, {kTraceReady}},
        {{A::kRecordAndSave, A::kRecord}, {kTraceReady, kStartTrace}},
        {{A::kRecordAndSave, A::kRecordAndSave}, {kTraceReady, kStartTrace}},
    };
    // Exiting, torch's (X, None) entries: only recording actions hand a trace over.
    if (exiting) {
      if (Records(from)) windows_.push_back({trace_start_, step_});
      return;
    }
    auto it = kMap.find({from, to});
    if (it == kMap.end()) return;
    for (Op op : it->second) {
      if (op == kStartTrace) trace_start_ = step_;
      if (op == kTraceReady) windows_.push_back({trace_start_, step_ - 1});
    }
  }

  std::optional<Schedule> schedule_;
  A action_ = A::kNone;
  int64_t step_ = 0;
  int64_t trace_start_ = 0;
  std::vector<Window> windows_;
};

// A clock that moves 10 ns per reading, so that every begin and end is distinct and known.
struct FakeClock {
  int64_t now = 1000;
  InProcessRecorder::Clock AsClock() {
    return [this] { return now += 10; };
  }
};

void Take(std::vector<Window>& out, std::unique_ptr<Trace> t) {
  if (t) out.push_back({t->first_step, t->last_step});
}

std::vector<Window> RecorderWindows(std::optional<Schedule> s, int steps) {
  InProcessRecorder r(s);
  std::vector<Window> out;
  r.Start();
  for (int i = 0; i < steps; ++i) Take(out, r.Step());
  Take(out, r.Stop());
  return out;
}

// Every stop step of one schedule in one run: before each step the recorder and the model are
// copied, and the copies stopped.
TEST(InProcessRecorder, WindowsMatchTorchForEveryScheduleAndStopStep) {
  int cases = 0;
  for (int64_t wait : {0, 1, 2})
    for (int64_t warmup : {0, 1, 3})
      for (int64_t active : {1, 2, 5})
        for (int64_t repeat : {0, 1, 3})
          for (int64_t skip_first : {0, 2, 7})
            for (int64_t skip_first_wait : {0, 1}) {
              const Schedule s{skip_first, wait, warmup, active, repeat, skip_first_wait};
              TorchModel torch(s);
              InProcessRecorder recorder(s);
              std::vector<Window> windows;
              torch.Start();
              recorder.Start();
              for (int steps = 0; steps <= 30; ++steps) {
                if (steps > 0) {
                  torch.Step();
                  Take(windows, recorder.Step());
                }
                TorchModel torch_stopped = torch;
                torch_stopped.Stop();
                InProcessRecorder stopped = recorder;
                std::vector<Window> got = windows;
                Take(got, stopped.Stop());
                ASSERT_EQ(got, torch_stopped.windows())
                    << "wait=" << wait << " warmup=" << warmup << " active=" << active
                    << " repeat=" << repeat << " skip_first=" << skip_first
                    << " skip_first_wait=" << skip_first_wait << " stopped after step " << steps
                    << "\n got:  " << Describe(got)
                    << "\n want: " << Describe(torch_stopped.windows());
                ++cases;
              }
            }
  EXPECT_GT(cases, 10000);
}

TEST(InProcessRecorder, WithoutScheduleOneWindowFromStartToStop) {
  EXPECT_EQ(RecorderWindows(std::nullopt, 0), (std::vector<Window>{{0, 0}}));
  EXPECT_EQ(RecorderWindows(std::nullopt, 4), (std::vector<Window>{{0, 4}}));
  InProcessRecorder r(std::nullopt);
  r.Start();
  auto t = r.Stop();
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->has_steps);
}

// The names, begins and durations of a window's ranges (the process name left out).
struct Seen {
  std::string name;
  int64_t ts, dur;
  bool unterminated;
  bool operator==(const Seen&) const = default;
};
std::vector<Seen> RangesOf(const Trace& t) {
  std::vector<Seen> out;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events.phase(i) == 'M') continue;
    out.push_back({std::string(t.str(t.events.name(i))), t.events.ts(i), t.events.dur(i),
                   (t.events.flags(i) & kFlagUnterminated) != 0});
  }
  return out;
}

// One range per step, named after it, then the step boundary; the windows handed over.
std::vector<std::unique_ptr<Trace>> RangePerStep(InProcessRecorder& r, int steps) {
  std::vector<std::unique_ptr<Trace>> windows;
  r.Start();
  for (int i = 0; i <= steps; ++i) {
    if (auto range = r.BeginRange("step " + std::to_string(i))) r.EndRange(*range);
    auto t = i < steps ? r.Step() : r.Stop();
    if (t) windows.push_back(std::move(t));
  }
  return windows;
}

TEST(InProcessRecorder, KeepsRangesOfRecordingStepsOnlyAndDiscardsWarmup) {
  FakeClock clock;
  // Steps: 0 wait, 1 warmup, 2-3 record; 4 wait, 5 warmup, 6-7 record; then nothing.
  InProcessRecorder r(Schedule{0, 1, 1, 2, 2, 0}, clock.AsClock());
  auto windows = RangePerStep(r, 9);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_TRUE(windows[0]->has_steps);
  EXPECT_EQ(windows[0]->first_step, 2);
  EXPECT_EQ(windows[0]->last_step, 3);
  EXPECT_EQ(windows[1]->first_step, 6);
  EXPECT_EQ(windows[1]->last_step, 7);
  // Window 1 began at the clock reading after the boundary into step 2; each range takes the
  // next two readings.
  const std::vector<Seen> first = RangesOf(*windows[0]);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0], (Seen{"step 2", 10, 10, false}));
  EXPECT_EQ(first[1], (Seen{"step 3", 30, 10, false}));
  const std::vector<Seen> second = RangesOf(*windows[1]);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].name, "step 6");
  EXPECT_EQ(second[1].name, "step 7");
}

TEST(InProcessRecorder, RecordAndSaveStepsEachEndAWindow) {
  InProcessRecorder r(Schedule{0, 0, 0, 1, 3, 0});
  auto windows = RangePerStep(r, 5);
  ASSERT_EQ(windows.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(windows[i]->first_step, i);
    EXPECT_EQ(windows[i]->last_step, i);
    const std::vector<Seen> ranges = RangesOf(*windows[i]);
    ASSERT_EQ(ranges.size(), 1u);
    EXPECT_EQ(ranges[0].name, "step " + std::to_string(i));
  }
}

TEST(InProcessRecorder, StopMidWindowHandsOverWhatWasRecordedAndCutsOpenRanges) {
  FakeClock clock;
  InProcessRecorder r(Schedule{0, 0, 0, 5, 0, 0}, clock.AsClock());
  r.Start();  // reading 1: the window begins
  auto done = r.BeginRange("done");
  ASSERT_TRUE(done);
  r.EndRange(*done);
  EXPECT_EQ(r.Step(), nullptr);
  auto open = r.BeginRange("open");
  ASSERT_TRUE(open);
  auto t = r.Stop();
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(r.started());
  EXPECT_EQ(t->first_step, 0);
  EXPECT_EQ(t->last_step, 1);
  const std::vector<Seen> ranges = RangesOf(*t);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0], (Seen{"done", 10, 10, false}));
  EXPECT_EQ(ranges[1], (Seen{"open", 30, 10, true}));
  r.EndRange(*open);  // after stop: nothing to end, nothing recorded
  EXPECT_EQ(r.Stop(), nullptr);
}

TEST(InProcessRecorder, StopDuringWarmupHandsOverNothing) {
  InProcessRecorder r(Schedule{0, 1, 2, 1, 0, 0});
  r.Start();
  EXPECT_EQ(r.Step(), nullptr);  // step 1: warmup
  EXPECT_FALSE(r.BeginRange("warm"));
  EXPECT_EQ(r.Stop(), nullptr);
}

TEST(InProcessRecorder, RangeOpenAcrossWindowsStaysInItsOwn) {
  InProcessRecorder r(Schedule{0, 0, 0, 1, 0, 0});
  r.Start();
  auto outer = r.BeginRange("outer");
  ASSERT_TRUE(outer);
  auto first = r.Step();  // step 0 was RECORD_AND_SAVE: its window ends with outer open
  ASSERT_NE(first, nullptr);
  auto inner = r.BeginRange("inner");
  ASSERT_TRUE(inner);
  r.EndRange(*outer);  // belongs to the window handed over: must not end "inner"
  auto second = r.Stop();
  ASSERT_NE(second, nullptr);
  const std::vector<Seen> a = RangesOf(*first);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].name, "outer");
  EXPECT_TRUE(a[0].unterminated);
  const std::vector<Seen> b = RangesOf(*second);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].name, "inner");
  EXPECT_TRUE(b[0].unterminated);
}

TEST(InProcessRecorder, RestartBeginsAgainAtStepZero) {
  InProcessRecorder r(Schedule{0, 1, 0, 1, 0, 0});
  r.Start();
  EXPECT_EQ(r.Step(), nullptr);  // step 1: record and save
  auto t = r.Step();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->first_step, 1);
  r.Stop();
  r.Start();
  EXPECT_EQ(r.step_num(), 0);
  EXPECT_FALSE(r.BeginRange("waiting"));  // step 0 waits again
}

}  // namespace
}  // namespace profsh
