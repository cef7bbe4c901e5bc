#include "engine/analysis/model/device_properties.h"

#include <string_view>

#include "engine/util/json_cursor.h"

namespace profsh {

namespace {

void ReadField(json::Cursor& in, std::string_view key, DeviceProperties* d) {
  if (key == "name") {
    if (in.Peek() == '"') {
      d->name = in.String();
    } else {
      in.Skip();
    }
    return;
  }
  std::optional<int64_t>* field = key == "id"               ? &d->id
                                  : key == "totalGlobalMem" ? &d->total_global_mem
                                  : key == "computeMajor"   ? &d->compute_major
                                  : key == "computeMinor"   ? &d->compute_minor
                                  : key == "numSms"         ? &d->num_sms
                                                            : nullptr;
  if (field == nullptr) {
    in.Skip();
  } else {
    *field = in.Int();
  }
}

}  // namespace

std::vector<DeviceProperties> ParseDeviceProperties(std::string_view json) {
  std::vector<DeviceProperties> devices;
  json::Cursor in(json);
  if (!in.Consume('[') || in.Consume(']')) return devices;
  do {
    DeviceProperties d;
    if (in.Consume('{')) {
      if (!in.Consume('}')) {
        do {
          std::optional<std::string> key = in.String();
          if (!key || !in.Consume(':')) return devices;
          ReadField(in, *key, &d);
        } while (in.Consume(','));
        if (!in.Consume('}')) return devices;
      }
    } else if (!in.Skip()) {
      return devices;
    }
    devices.push_back(std::move(d));
  } while (in.Consume(','));
  return devices;
}

std::vector<DeviceProperties> ReadDeviceProperties(const Trace& trace) {
  const std::string* json = trace.FindMetadata("deviceProperties");
  return json == nullptr ? std::vector<DeviceProperties>{} : ParseDeviceProperties(*json);
}

}  // namespace profsh
