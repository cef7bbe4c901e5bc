// torch.profiler.schedule, exactly: which steps are skipped, waited, warmed up, recorded, and
// which one ends a window (RECORD_AND_SAVE). Header-only and dependency-free: the injected
// runtime evaluates it at every step boundary, the Lua binding exposes it as profsh.schedule.
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
