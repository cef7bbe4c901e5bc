// The fwdbwd flows torch.profiler's traces and profsh's own recordings draw from a forward
// operator's start to the start of its backward operator: flow events ('s' then 'f', category
// fwdbwd) paired by their id, each end placed by its track and time.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

struct TrackPlace {
  uint32_t track;
  int64_t ts;
  auto operator<=>(const TrackPlace&) const = default;
};

struct ForwardBackwardFlow {
  TrackPlace forward, backward;
};

// Every finish whose id some start has, in trace order; a start repeated with one id counts as
// its latest.
std::vector<ForwardBackwardFlow> ForwardBackwardFlows(const Trace& trace);

}  // namespace profsh
