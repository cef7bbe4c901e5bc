// The timeline overview of a trace: one lane per track (a process's thread or a GPU stream) with
// how busy it is in each of a fixed number of time buckets, so a trace of any size gives a
// picture of the same small size.
#pragma once

#include <cstddef>

#include "engine/report/document.h"
#include "engine/trace/trace.h"

namespace profsh::report {

// `max_lanes`: the busiest tracks are kept, in the trace's process and thread order.
Timeline BuildTimelineOverview(const Trace& trace, size_t buckets, size_t max_lanes);

}  // namespace profsh::report
