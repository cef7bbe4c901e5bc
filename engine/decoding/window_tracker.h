// The windows of one stream: a stream recorded with a schedule, capture ranges or on-demand
// requests is cut into windows (the steps of one active cycle, one capture range, one request);
// without any, the whole stream is one window. Knows times and steps only; what a window holds
// is the emitter's.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "engine/decoding/stream_clock.h"
#include "engine/stream/schedule.h"

namespace profsh {

struct WindowInfo {
  int64_t pid = 0;
  uint64_t index = 0;      // windows of this stream, from 0
  bool has_steps = false;  // a schedule or on-demand window
  int64_t first_step = 0, last_step = 0;
  int64_t begin_ns = 0, end_ns = 0;  // absolute (ns since the epoch)
  std::string reason;                // "schedule", "capture range", "on demand", "whole run"
  uint64_t request = 0;              // the on-demand request it answers (0: none)
  // The cuda activity: launches of the window whose device work had not reported when it was
  // handed over, and graph launches it did not wait for (gpu_launch_waits.h).
  uint64_t gpu_launches_unreported = 0, gpu_graph_launches_not_awaited = 0;
};

struct Window {
  WindowInfo info;
  uint64_t begin_ticks = 0;
  uint64_t end_ticks = UINT64_MAX;  // open
  ProfilerAction last_action = ProfilerAction::kRecord;
  bool sealed = false;  // handed over: it takes nothing more
};

class WindowTracker {
 public:
  static constexpr int kNone = -1;

  explicit WindowTracker(const TickClock& clock) : clock_(clock) {}
  void SetProcess(int64_t pid, int64_t start_ns) {
    pid_ = pid;
    start_ns_ = start_ns;
  }

  // Boundaries, in stream order. Each returns the index of a window it opened, if any.
  std::optional<size_t> OnStep(uint64_t ticks, int64_t step, ProfilerAction action);
  std::optional<size_t> OnCapture(uint64_t ticks, bool begin);
  void OnDemand(uint64_t request) { last_demand_ = request; }
  void OnStop(uint64_t ticks) { EndOpenWindow(ticks); }
  // The whole stream as one window (an unwindowed stream).
  size_t OpenWholeRun() { return NewWindow(0, "whole run", false, 0); }
  void EndOpenWindow(uint64_t ticks);

  // The window recording at `ticks`, or kNone. A window already handed over takes nothing more:
  // such a late event is counted in `*late`.
  int At(uint64_t ticks, uint64_t* late) const;

  Window& operator[](size_t index) { return windows_[index - base_]; }
  const Window& operator[](size_t index) const { return windows_[index - base_]; }
  Window* open_window() {
    return windows_.empty() || windows_.back().end_ticks != UINT64_MAX ? nullptr : &windows_.back();
  }
  size_t begin() const { return base_; }
  size_t end() const { return base_ + windows_.size(); }
  bool empty() const { return windows_.empty(); }
  // Lets go of the oldest sealed windows beyond `keep` (a long job's windows never end).
  void ForgetSealed(size_t keep);

 private:
  size_t NewWindow(uint64_t begin, const char* reason, bool steps, int64_t step);

  const TickClock& clock_;
  int64_t pid_ = 0;
  int64_t start_ns_ = 0;
  std::deque<Window> windows_;
  size_t base_ = 0;  // index of windows_.front()
  uint64_t last_demand_ = 0;
};

}  // namespace profsh
