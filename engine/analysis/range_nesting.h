// CPU ranges per thread and what was open when something happened: the nesting of ranges
// (level, direct children) and, for each call (a runtime call, say), the ranges around it. Used
// to place kernels under the NVTX ranges and operators that launched them.
#pragma once

#include <cstdint>
#include <vector>

namespace profsh {

// An interval on a trace track, with what the analyses built on it need.
struct Span {
  int64_t ts, end;  // ns
  uint32_t name, track;
  int64_t correlation = -1;
  int64_t bytes = 0;
  uint64_t event = 0;  // index in the trace
};

struct RangeTree {
  std::vector<uint32_t> order;           // range indices by (track, start, longer first)
  std::vector<int32_t> level, children;  // level 0: outermost
};

RangeTree NestRanges(const std::vector<Span>& ranges);

// For each call, the ranges open on its track when it started, outermost first.
std::vector<std::vector<uint32_t>> EnclosingRanges(const std::vector<Span>& ranges,
                                                   const RangeTree& tree,
                                                   const std::vector<Span>& calls);

}  // namespace profsh
