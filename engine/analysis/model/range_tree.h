// The nesting of ranges on each track: parent, depth and children, from one sweep over the
// ranges ordered by (track, start, longer first, trace order).
//
// The rule (range_nesting's, and nsys' for NVTX ranges): a range's parent is the innermost range
// still open when it starts, i.e. the latest one in that order whose end is after the start.
// At equal starts the longer range is the outer one; at equal starts and ends the earlier in the
// trace is. A range that sticks out of its parent's end (microsecond rounding, or ranges that
// really overlap) stays that parent's child, and a range that ended but lies under one still
// open stays on the sweep's stack until that one closes. torch's _populate_cpu_children
// (function_events' Nest) differs there: it asks the parent to contain the child.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace profsh {

struct RangeExtent {
  int64_t ts, end;
  uint32_t track;
};

struct RangeTree {
  std::vector<uint32_t> order;   // range indices by (track, start, longer first, trace order)
  std::vector<uint32_t> parent;  // kNoIndex (UINT32_MAX) at the top of a track
  std::vector<int32_t> depth;    // 0 at the top
  std::vector<int32_t> children;
  size_t size() const { return parent.size(); }
};

RangeTree NestRanges(std::span<const RangeExtent> ranges);

// For each instant (a call on a track), the innermost range open there: the latest range in the
// tree's order that starts at or before it and ends after it, or UINT32_MAX. The ranges open at
// the instant are that range and those of its ancestors that end after the instant
// (OpenRangesAt).
struct TrackInstant {
  int64_t ts;
  uint32_t track;
};
std::vector<uint32_t> InnermostOpenRanges(std::span<const RangeExtent> ranges,
                                          const RangeTree& tree,
                                          std::span<const TrackInstant> instants);

// The ranges open at `ts` from the innermost one, outermost first.
void OpenRangesAt(std::span<const RangeExtent> ranges, const RangeTree& tree, uint32_t innermost,
                  int64_t ts, std::vector<uint32_t>* out);

}  // namespace profsh
