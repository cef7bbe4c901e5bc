// torch.profiler's profile object for code running in this process (Lua's p:start(), p:step(),
// p:stop() and profsh.record_function): which steps record, by the schedule and the window rule
// of engine/stream/schedule.h, and each finished window as a Trace of the ranges recorded in it.
// The workload's recorder (the injected runtime and the stream decoder) applies the same rule.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/stream/schedule.h"
#include "engine/trace/trace.h"

namespace profsh {

class InProcessRecorder {
 public:
  using Clock = std::function<int64_t()>;  // nanoseconds since the epoch
  static int64_t RealtimeNs();

  // Without a schedule every step records and the window spans start to stop, as torch's
  // profiler does without one.
  explicit InProcessRecorder(std::optional<Schedule> schedule, Clock clock = RealtimeNs);

  bool started() const { return started_; }
  int64_t step_num() const { return step_num_; }

  // profile.start(): step 0 begins (a window with it when its action records).
  void Start();
  // profile.step(): a step boundary; the window it closed, if it closed one.
  std::unique_ptr<Trace> Step();
  // profile.stop(): the window still open, if any (torch hands a partial window over too).
  std::unique_ptr<Trace> Stop();

  // A record_function range. Ranges begun outside a recording window (before start, between
  // windows, during warmup) are not kept; one still open when its window ends is cut there and
  // marked unterminated, and its later end is ignored.
  struct RangeToken {
    uint64_t window;
    size_t index;
  };
  std::optional<RangeToken> BeginRange(std::string_view name);
  void EndRange(RangeToken token) noexcept;  // the binding calls it outside Protect()

 private:
  struct Range {
    std::string name;
    int64_t begin_ns;
    std::optional<int64_t> end_ns;
  };

  ProfilerAction ActionAt(int64_t step) const;
  // Applies the window rule at the boundary into a step whose action is `next`.
  std::unique_ptr<Trace> Transit(ProfilerAction next);
  std::unique_ptr<Trace> WindowTrace(int64_t end_ns) const;

  std::optional<Schedule> schedule_;
  Clock clock_;
  bool started_ = false;
  int64_t step_num_ = 0;
  ProfilerAction action_ = ProfilerAction::kNone;  // of the current step
  bool window_open_ = false;
  uint64_t window_serial_ = 0;  // tells a range's window from a later one
  int64_t window_first_ = 0, window_last_ = 0, window_begin_ns_ = 0;
  std::vector<Range> ranges_;
};

}  // namespace profsh
