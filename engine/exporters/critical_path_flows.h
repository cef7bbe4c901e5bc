// A critical path as arrows for the Chrome export, as HTA's overlay_critical_path_analysis draws
// it: one flow event pair per edge of the path of the kinds HTA shows by default (dependency,
// kernel launch delay, synchronization), plus the links across ranks at collectives.
#pragma once

#include <vector>

#include "engine/analysis/critical_path/cross_rank.h"
#include "engine/exporters/exporter.h"

namespace profsh {

// An arrow starts at its edge's source (an event's start, or its end less min(1 µs, its
// duration) on a device, so that it lands inside the slice) and ends at its destination. A
// link through a collective's meeting node is drawn from the last rank's arrival to the rank
// that waited. Each arrow's args: weight (µs), type (HTA's edge type name), critical (1).
std::vector<ChromeFlow> CriticalPathFlows(const CpGraph& graph, const JobLayout& job,
                                          const CpPath& path);

}  // namespace profsh
