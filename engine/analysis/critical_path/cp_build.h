// Builds HTA's critical path graph of one rank's events in a window (critical_path.h says which).
#pragma once

#include "engine/analysis/critical_path/critical_path.h"
#include "engine/analysis/model/event_model.h"

namespace profsh {

// The graph of the events of `rank` (all events when rank is unset) in [start, end] (ns);
// `notes` receives what the graph could not see.
CpGraph BuildCriticalPathGraph(const EventModel& model, const CriticalPathOptions& options,
                               const std::vector<int32_t>& rank_of_track,
                               std::optional<int32_t> rank, int64_t start, int64_t end,
                               std::vector<std::string>* notes);

}  // namespace profsh
