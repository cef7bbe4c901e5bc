#include "engine/decoding/window_tracker.h"

#include <algorithm>

namespace profsh {

size_t WindowTracker::NewWindow(uint64_t begin, const char* reason, bool steps, int64_t step) {
  Window w;
  w.info.pid = pid_;
  w.info.index = end();
  w.info.reason = reason;
  w.info.has_steps = steps;
  w.info.first_step = w.info.last_step = step;
  w.begin_ticks = begin;
  w.info.begin_ns = begin == 0 ? start_ns_ : clock_.ToNs(begin);
  windows_.push_back(std::move(w));
  return end() - 1;
}

void WindowTracker::EndOpenWindow(uint64_t ticks) {
  if (Window* w = open_window()) {
    w->end_ticks = std::max(ticks, w->begin_ticks);
    w->info.end_ns = clock_.ToNs(w->end_ticks);
  }
}

std::optional<size_t> WindowTracker::OnStep(uint64_t ticks, int64_t step, ProfilerAction action) {
  Window* w = open_window();
  const WindowChange change =
      StepWindowChange(w != nullptr, w ? w->last_action : ProfilerAction::kNone, action);
  std::optional<size_t> opened;
  if (change.end_window) {
    EndOpenWindow(ticks);
    w = nullptr;
  }
  if (change.begin_window) {
    opened = NewWindow(ticks, last_demand_ ? "on demand" : "schedule", true, step);
    w = &(*this)[*opened];
    w->info.request = last_demand_;
  }
  if (w != nullptr && Records(action)) {
    w->info.last_step = step;
    w->last_action = action;
  }
  return opened;
}

std::optional<size_t> WindowTracker::OnCapture(uint64_t ticks, bool begin) {
  if (!begin) {
    EndOpenWindow(ticks);
    return std::nullopt;
  }
  if (open_window()) return std::nullopt;
  return NewWindow(ticks, "capture range", false, 0);
}

int WindowTracker::At(uint64_t ticks, uint64_t* late) const {
  for (size_t i = end(); i-- > begin();) {
    const Window& w = (*this)[i];
    if (ticks >= w.begin_ticks && ticks < w.end_ticks) {
      if (!w.sealed) return static_cast<int>(i);
      ++*late;
      return kNone;
    }
    if (w.end_ticks <= ticks) break;  // windows are in time order
  }
  return kNone;
}

void WindowTracker::ForgetSealed(size_t keep) {
  while (windows_.size() > keep && windows_.front().sealed) {
    windows_.pop_front();
    ++base_;
  }
}

}  // namespace profsh
