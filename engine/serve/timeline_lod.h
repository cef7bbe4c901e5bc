// The timeline at a level of detail: for a time range and a width in pixels, each thread's and
// stream's slices wide enough to see, and the narrower ones merged into summary blocks (per
// nesting depth, about a pixel wide each, with the count of slices in it). The browser receives at
// most a few slices per pixel and lane whatever the trace's size; that is what lets a 5 GB trace
// open.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh::serve {

// Built once per loaded trace: per track, its complete events sorted by start, with depths.
struct TimelineIndex {
  struct Lane {
    uint32_t track = 0;
    std::string label;
    std::vector<uint32_t> events;  // event indices, by (ts, longest first)
    std::vector<uint8_t> depth;    // nesting depth of each, capped at kMaxDepth
    int64_t longest_ns = 0;
    int max_depth = 0;
  };
  std::vector<Lane> lanes;
  int64_t begin_ns = 0, end_ns = 0;
};

inline constexpr int kMaxDepth = 63;

TimelineIndex BuildTimelineIndex(const Trace& trace);

struct TimelineQuery {
  int64_t t0 = 0, t1 = 0;  // trace time (ns), t0 < t1
  int width_px = 1000;
};

// The JSON the timeline page draws: names, lanes, slices [ts, dur, depth, name] and blocks
// [ts, dur, depth, count] (times in ns).
std::string TimelineJson(const Trace& trace, const TimelineIndex& index, const TimelineQuery& q);

}  // namespace profsh::serve
