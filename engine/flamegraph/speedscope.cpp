#include "engine/flamegraph/speedscope.h"

#include <vector>

#include "engine/exporters/json_out.h"
#include "engine/io/atomic_writer.h"

#ifndef PROFSH_VERSION
#define PROFSH_VERSION "0"
#endif

namespace profsh {

namespace {

std::string SpeedscopeUnit(const std::string& unit) {
  if (unit == "us" || unit == "microseconds") return "microseconds";
  if (unit == "ns" || unit == "nanoseconds") return "nanoseconds";
  if (unit == "ms" || unit == "milliseconds") return "milliseconds";
  if (unit == "s" || unit == "seconds") return "seconds";
  if (unit == "bytes" || unit == "b") return "bytes";
  return "none";
}

}  // namespace

Status WriteSpeedscope(const FoldedStacks& stacks, const std::string& profile_name,
                       const std::string& unit, const std::string& path) {
  // Speedscope's frame list holds the frames samples use, numbered in order of first use.
  std::vector<uint32_t> index_of(stacks.frame_name_count(), UINT32_MAX);
  std::vector<std::string_view> frames;
  double total = 0;
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (!(stacks.count(i) > 0)) continue;
    for (uint32_t id : stacks.frames(i)) {
      if (index_of[id] == UINT32_MAX) {
        index_of[id] = static_cast<uint32_t>(frames.size());
        frames.push_back(stacks.frame_name(id));
      }
    }
    total += stacks.count(i);
  }
  auto writer = AtomicWriter::Create(path);
  if (!writer.ok()) return writer.error();
  {
    JsonOut j(*writer.value());
    j.Raw(
        "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n\"shared\": "
        "{\"frames\": [");
    for (size_t i = 0; i < frames.size(); ++i) {
      j.Raw(i == 0 ? "\n{\"name\": " : ",\n{\"name\": ");
      j.String(frames[i]);
      j.Char('}');
    }
    j.Raw("]},\n\"profiles\": [{\"type\": \"sampled\", \"name\": ");
    j.String(profile_name);
    j.Raw(", \"unit\": ");
    j.String(SpeedscopeUnit(unit));
    j.Raw(", \"startValue\": 0, \"endValue\": ");
    j.Double(total);
    j.Raw(",\n\"samples\": [");
    bool first = true;
    for (size_t i = 0; i < stacks.size(); ++i) {
      if (!(stacks.count(i) > 0)) continue;
      j.Raw(first ? "\n[" : ",\n[");
      first = false;
      auto f = stacks.frames(i);
      for (size_t k = 0; k < f.size(); ++k) {
        if (k > 0) j.Char(',');
        j.UInt(index_of[f[k]]);
      }
      j.Char(']');
    }
    j.Raw("],\n\"weights\": [");
    first = true;
    for (size_t i = 0; i < stacks.size(); ++i) {
      if (!(stacks.count(i) > 0)) continue;
      if (!first) j.Char(',');
      first = false;
      j.Double(stacks.count(i));
    }
    j.Raw("]}],\n\"name\": ");
    j.String(profile_name);
    j.Raw(", \"activeProfileIndex\": 0, \"exporter\": \"profsh " PROFSH_VERSION "\"}\n");
  }
  return writer.value()->Commit();
}

}  // namespace profsh
