// The ids that tie events together (correlation, External id), where device work ran (device,
// stream) and the step ranges, as typed integers, read once from the arguments. They are kept
// per role, for the events whose role has them, in trace order: a trace's columns stay as they
// are, and these lists hold only device work, runtime calls and CPU ranges.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/model/event_roles.h"
#include "engine/trace/trace.h"

namespace profsh {

// An id the event does not carry (or carries as something other than a number).
inline constexpr int64_t kNoId = INT64_MIN;
// No index: a link with no candidate, a range at the top of its track.
inline constexpr uint32_t kNoIndex = UINT32_MAX;

// Kernels, copies, sets and synchronizations: role kDeviceWork.
struct DeviceWorkIds {
  std::vector<uint32_t> event;
  std::vector<int64_t> correlation, external, device, stream;
  size_t size() const { return event.size(); }
};

// Runtime and driver calls: role kRuntime.
struct RuntimeIds {
  std::vector<uint32_t> event;
  std::vector<int64_t> correlation, external;
  size_t size() const { return event.size(); }
};

// CPU ranges, the events the range tree nests: operators (kCpuOp) and annotations (kAnnotation).
struct RangeIds {
  std::vector<uint32_t> event;
  std::vector<int64_t> external;
  size_t size() const { return event.size(); }
};

// A ProfilerStep#N range (any complete event so named that is not device work, a runtime call
// or a GPU annotation).
struct StepRange {
  uint32_t event;
  int64_t number;
};

struct EventIds {
  DeviceWorkIds device_work;
  RuntimeIds runtime;
  RangeIds ranges;
  std::vector<uint32_t> gpu_annotations;  // role kGpuAnnotation
  std::vector<StepRange> steps;           // in trace order
};

EventIds ReadEventIds(const Trace& trace, const EventRoles& roles);

}  // namespace profsh
