#include "engine/analysis/range_nesting.h"

namespace profsh {

namespace {

std::vector<RangeExtent> Extents(const std::vector<Span>& spans) {
  std::vector<RangeExtent> out;
  out.reserve(spans.size());
  for (const Span& s : spans) out.push_back(RangeExtent{s.ts, s.end, s.track});
  return out;
}

}  // namespace

RangeTree NestRanges(const std::vector<Span>& ranges) {
  return NestRanges(Extents(ranges));
}

std::vector<std::vector<uint32_t>> EnclosingRanges(const std::vector<Span>& ranges,
                                                   const RangeTree& tree,
                                                   const std::vector<Span>& calls) {
  const std::vector<RangeExtent> extents = Extents(ranges);
  std::vector<TrackInstant> starts;
  starts.reserve(calls.size());
  for (const Span& c : calls) starts.push_back(TrackInstant{c.ts, c.track});
  const std::vector<uint32_t> innermost = InnermostOpenRanges(extents, tree, starts);
  std::vector<std::vector<uint32_t>> enclosing(calls.size());
  for (size_t c = 0; c < calls.size(); ++c)
    OpenRangesAt(extents, tree, innermost[c], calls[c].ts, &enclosing[c]);
  return enclosing;
}

}  // namespace profsh
