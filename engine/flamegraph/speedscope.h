// Export to speedscope's file format (https://www.speedscope.app/file-format-schema.json): one
// "sampled" profile whose samples are the unique stacks and whose weights are their values.
#pragma once

#include <string>

#include "engine/flamegraph/folded_stacks.h"
#include "engine/util/result.h"

namespace profsh {

// `unit` is the count name; "us", "ns", "ms", "s" and "bytes" map to speedscope's units.
Status WriteSpeedscope(const FoldedStacks& stacks, const std::string& profile_name,
                       const std::string& unit, const std::string& path);

}  // namespace profsh
