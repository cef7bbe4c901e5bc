// Spans on trace tracks (what nsys' and the launch statistics' views collect) nested and placed
// by the event model's range rule (engine/analysis/model/range_tree.h): the nesting of ranges
// and, for each call (a runtime call, say), the ranges open around it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/model/range_tree.h"

namespace profsh {

// An interval on a trace track, with what the analyses built on it need.
struct Span {
  int64_t ts, end;  // ns
  uint32_t name, track;
  int64_t correlation = -1;
  int64_t bytes = 0;
  uint64_t event = 0;  // index in the trace
};

// The model's tree of the spans (depth 0: outermost).
RangeTree NestRanges(const std::vector<Span>& ranges);

// For each call, the ranges open on its track when it started, outermost first.
std::vector<std::vector<uint32_t>> EnclosingRanges(const std::vector<Span>& ranges,
                                                   const RangeTree& tree,
                                                   const std::vector<Span>& calls);

}  // namespace profsh
