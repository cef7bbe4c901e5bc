// The device side of a trace, as HTA sees it: the work each device ran (kernels, copies, sets,
// synchronizations) with its stream, device and the correlation id that names the runtime call
// which launched it; the runtime calls; the user annotations on the GPU and on the CPU; the
// ProfilerStep ranges. One
// Trace is one rank (its "distributedInfo" rank, 0 when the trace names none).
//
// Times are HTA's: integer microseconds, a start rounded up and an end rounded down
// (HTA's round_down_time_stamps), so that every analysis built on this model counts what HTA
// counts. Columns, one vector per field, in trace order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/model/event_roles.h"
#include "engine/trace/trace.h"

namespace profsh {

// HTA's kernel types, decided from the name (hta/common/types.py's patterns).
enum class KernelType : uint8_t { kCommunication = 0, kMemory = 1, kComputation = 2, kOther = 3 };
const char* KernelTypeName(KernelType type);  // "COMMUNICATION", ...
KernelType ClassifyKernel(std::string_view name);

struct GpuEventOptions {
  // HTA drops the device work launched from the last ProfilerStep on (a step the profiler cut
  // short) when a trace has two steps or more; true keeps it.
  bool include_last_profiler_step = false;
  // HTA rounds microseconds held in doubles, which near today's epoch times (1.7e15 µs) are
  // 0.25 µs apart, so its rounding can move a start or an end by 1 µs against the exact value;
  // profsh does the same by default so that its numbers are HTA's. true rounds the exact
  // nanoseconds instead.
  bool exact_rounding = false;
};

struct GpuEvents {
  int64_t rank = 0;
  // Device work.
  std::vector<int64_t> ts, end;  // µs, HTA's rounding
  std::vector<uint32_t> name;    // string ids of the trace
  std::vector<DeviceWorkKind> kind;
  std::vector<KernelType> type;
  std::vector<int64_t> device, stream, correlation;  // -1 when absent
  std::vector<double> bandwidth;  // copies and sets: "memory bandwidth (GB/s)", 0 when absent
  std::vector<uint32_t> launch;   // index of the runtime call with the correlation, or kNone
  // Runtime calls (categories *_runtime and cuda_driver) that carry a correlation id.
  std::vector<int64_t> runtime_ts, runtime_end, runtime_correlation;
  std::vector<uint32_t> runtime_name, runtime_track;
  // ATen operators (names "aten::…"), which launch the device work.
  std::vector<int64_t> aten_ts, aten_end;
  std::vector<uint32_t> aten_name, aten_track;
  // gpu_user_annotation ranges (the device time of each record_function range).
  std::vector<int64_t> annotation_ts, annotation_end;
  std::vector<uint32_t> annotation_name;
  // user_annotation ranges (the same ranges on the CPU, ProfilerStep#N among them).
  std::vector<int64_t> cpu_annotation_ts, cpu_annotation_end;
  std::vector<uint32_t> cpu_annotation_name;
  // ProfilerStep#N ranges, in time order.
  struct Step {
    int64_t number, ts, end;
  };
  std::vector<Step> steps;
  std::vector<std::string> notes;  // what was left out, and why
  // The last-step rule's cut on runtime calls (see BuildGpuEvents); every call is kept when
  // `step_cut` is false.
  bool step_cut = false;
  bool cut_inclusive = false;
  int64_t cut_ts = 0;
  bool RuntimeKept(size_t r) const {
    return !step_cut || (cut_inclusive ? runtime_ts[r] <= cut_ts : runtime_ts[r] < cut_ts);
  }

  static constexpr uint32_t kNone = UINT32_MAX;
  size_t size() const { return ts.size(); }
  // The devices the work ran on, ascending. HTA folds a rank's devices together; profsh gives
  // one row per device when there are several (a process driving two GPUs).
  std::vector<int64_t> Devices() const;
};

GpuEvents BuildGpuEvents(const Trace& trace, const GpuEventOptions& options = {});

// Rounding of nanosecond times to microseconds.
inline int64_t CeilMicros(int64_t ns) {
  return ns >= 0 ? (ns + 999) / 1000 : -((-ns) / 1000);
}
inline int64_t FloorMicros(int64_t ns) {
  return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

// The double Python reads from the microsecond text of `ns` (correctly rounded: the whole
// microseconds are exact in a double, the fraction is added with one rounding).
inline double MicrosAsPythonFloat(int64_t ns) {
  int64_t whole = ns / 1000, fraction = ns % 1000;
  if (fraction < 0) {
    whole -= 1;
    fraction += 1000;
  }
  return static_cast<double>(whole) + static_cast<double>(fraction) / 1000.0;
}

}  // namespace profsh
