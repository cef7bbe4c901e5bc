#include "engine/recording/in_process_recorder.h"

#include <unistd.h>

#include <chrono>
#include <utility>

#include "engine/trace/kineto_schema.h"
#include "engine/trace/trace_builder.h"

namespace profsh {

int64_t InProcessRecorder::RealtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

InProcessRecorder::InProcessRecorder(std::optional<Schedule> schedule, Clock clock)
    : schedule_(std::move(schedule)), clock_(std::move(clock)) {}

ProfilerAction InProcessRecorder::ActionAt(int64_t step) const {
  return schedule_ ? schedule_->Action(step) : ProfilerAction::kRecord;
}

void InProcessRecorder::Start() {
  started_ = true;
  step_num_ = 0;
  window_open_ = false;
  ranges_.clear();
  action_ = ProfilerAction::kNone;  // before start nothing records
  Transit(ActionAt(0));
}

std::unique_ptr<Trace> InProcessRecorder::Step() {
  if (!started_) return nullptr;
  ++step_num_;
  return Transit(ActionAt(step_num_));
}

std::unique_ptr<Trace> InProcessRecorder::Stop() {
  if (!started_) return nullptr;
  started_ = false;
  return Transit(ProfilerAction::kNone);
}

std::unique_ptr<Trace> InProcessRecorder::Transit(ProfilerAction next) {
  const WindowChange change = StepWindowChange(window_open_, action_, next);
  action_ = next;
  std::unique_ptr<Trace> sealed;
  if (change.end_window) {
    sealed = WindowTrace(clock_());
    window_open_ = false;
    ranges_.clear();
  }
  if (change.begin_window) {
    window_open_ = true;
    ++window_serial_;
    window_first_ = step_num_;
    window_begin_ns_ = clock_();
  }
  if (window_open_) window_last_ = step_num_;
  return sealed;
}

std::optional<InProcessRecorder::RangeToken> InProcessRecorder::BeginRange(std::string_view name) {
  if (!window_open_) return std::nullopt;
  ranges_.push_back(Range{std::string(name), clock_(), std::nullopt});
  return RangeToken{window_serial_, ranges_.size() - 1};
}

void InProcessRecorder::EndRange(RangeToken token) noexcept {
  if (!window_open_ || token.window != window_serial_ || token.index >= ranges_.size()) return;
  ranges_[token.index].end_ns = clock_();
}

std::unique_ptr<Trace> InProcessRecorder::WindowTrace(int64_t end_ns) const {
  auto trace = std::make_unique<Trace>();
  trace->origin_ns = window_begin_ns_;
  trace->has_origin = true;
  trace->source_path = "in-process profile";
  trace->has_steps = schedule_.has_value();
  trace->first_step = window_first_;
  trace->last_step = window_last_;
  TraceBuilder b(*trace);
  b.SetFormat("profsh-inprocess");
  // Lua runs on one thread: the ranges are this thread's.
  const Ident pid{static_cast<int64_t>(getpid()), 0, false};
  const Ident tid{static_cast<int64_t>(gettid()), 0, false};
  for (const Range& r : ranges_) {
    EventFields e;
    e.ts = r.begin_ns - window_begin_ns_;
    e.dur = r.end_ns.value_or(end_ns) - r.begin_ns;
    e.name = r.name;
    e.category = kineto::kUserAnnotation;
    e.pid = pid;
    e.tid = tid;
    e.flags = r.end_ns ? 0 : kFlagUnterminated;
    b.AddEvent(e, TraceBuilder::kNoArgs, {});
  }
  b.BeginArgs();
  b.AddStringArg(kineto::kMetaName, "profsh (in-process)");
  EventFields m;
  m.phase = 'M';
  m.name = kineto::kProcessName;
  m.pid = pid;
  m.tid = tid;
  b.AddEvent(m, b.BuildSchema(), {});
  b.Finish();
  return trace;
}

}  // namespace profsh
