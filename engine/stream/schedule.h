// torch.profiler.schedule, exactly: which steps are skipped, waited, warmed up, recorded, and
// which one ends a window (RECORD_AND_SAVE); and the window rule that turns actions into
// windows. Header-only and dependency-free: the injected runtime evaluates the schedule at every
// step boundary, the session layer's decoder and the in-process recorder apply the window rule,
// the Lua binding exposes the schedule as profsh.schedule.
#pragma once

#include <cstdint>
#include <string_view>

namespace profsh {

enum class ProfilerAction : uint8_t { kNone = 0, kWarmup = 1, kRecord = 2, kRecordAndSave = 3 };

inline const char* ActionName(ProfilerAction a) {
  switch (a) {
    case ProfilerAction::kNone:
      return "NONE";
    case ProfilerAction::kWarmup:
      return "WARMUP";
    case ProfilerAction::kRecord:
      return "RECORD";
    default:
      return "RECORD_AND_SAVE";
  }
}

inline bool Records(ProfilerAction a) {
  return a == ProfilerAction::kRecord || a == ProfilerAction::kRecordAndSave;
}

// What a step boundary does to the recording window, as torch's profiler does it: an open
// window ends after its RECORD_AND_SAVE step, or when the next action does not record; a new
// window begins at a recording step when none is open (or the last one just ended). Warmup
// steps record nothing that is kept.
struct WindowChange {
  bool end_window = false;
  bool begin_window = false;
};
inline WindowChange StepWindowChange(bool window_open, ProfilerAction window_last_action,
                                     ProfilerAction next) {
  WindowChange c;
  c.end_window =
      window_open && (window_last_action == ProfilerAction::kRecordAndSave || !Records(next));
  c.begin_window = Records(next) && (!window_open || c.end_window);
  return c;
}

struct Schedule {
  int64_t skip_first = 0;
  int64_t wait = 0;
  int64_t warmup = 0;
  int64_t active = 1;
  int64_t repeat = 0;  // cycles; 0: forever
  int64_t skip_first_wait = 0;

  // torch's assertion, and its text.
  static constexpr const char* kInvalidMessage =
      "Invalid profiler schedule arguments (wait >= 0, warmup >= 0, active > 0, repeat >= 0, "
      "skip_first >= 0)";
  bool Valid() const {
    return wait >= 0 && warmup >= 0 && active > 0 && repeat >= 0 && skip_first >= 0;
  }

  // The parameter named as torch names it (skip_first, wait, ...), or nullptr.
  int64_t* Field(std::string_view name) {
    return name == "skip_first"        ? &skip_first
           : name == "wait"            ? &wait
           : name == "warmup"          ? &warmup
           : name == "active"          ? &active
           : name == "repeat"          ? &repeat
           : name == "skip_first_wait" ? &skip_first_wait
                                       : nullptr;
  }

  // torch's schedule_fn(step), for step >= 0. skip_first_wait (newer torch): the first cycle after
  // skip_first starts without its wait.
  ProfilerAction Action(int64_t step) const {
    if (step < skip_first) return ProfilerAction::kNone;
    step -= skip_first;
    if (skip_first_wait != 0) step += wait;
    const int64_t n = wait + warmup + active;
    // torch compares step / n >= repeat in floating point; for integers that is step >= repeat * n.
    if (repeat > 0 && step >= repeat * n) return ProfilerAction::kNone;
    const int64_t m = step % n;
    if (m < wait) return ProfilerAction::kNone;
    if (m < wait + warmup) return ProfilerAction::kWarmup;
    return m < n - 1 ? ProfilerAction::kRecord : ProfilerAction::kRecordAndSave;
  }
};

}  // namespace profsh
