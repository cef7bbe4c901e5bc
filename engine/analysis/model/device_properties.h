// The trace's "deviceProperties" (Kineto's list of the devices: name, memory, compute
// capability, SM count), typed, in the order the trace lists them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

struct DeviceProperties {
  std::optional<int64_t> id;
  std::optional<std::string> name;
  std::optional<int64_t> total_global_mem;  // bytes
  std::optional<int64_t> compute_major, compute_minor;
  std::optional<int64_t> num_sms;
};

// Empty when the trace has no such metadata; an entry that is not an object, or a field of another
// type than expected, is left empty rather than failing the views that only show them.
std::vector<DeviceProperties> ReadDeviceProperties(const Trace& trace);
// The same from the metadata's JSON text.
std::vector<DeviceProperties> ParseDeviceProperties(std::string_view json);

}  // namespace profsh
