// Copies events of one trace into a trace being built: how a second recording of the same run
// (torch's profiler's trace beside the collector's streams) joins it. Names, categories,
// tracks and argument schemas are interned anew in the destination; inline argument words are
// copied as they are (they hold numbers only).
#pragma once

#include <cstdint>
#include <functional>

#include "engine/trace/trace.h"
#include "engine/trace/trace_builder.h"

namespace profsh {

// Where one event of `from` goes: `ts` is its start in ns relative to the destination's origin
// (to be set), `pid` and `tid` its track, idents of `from` (string ids are `from`'s pool's) unless
// `place` sets `*pid_interned`: then `pid` is the destination's already (a string pid renamed).
// False leaves the event out.
using PlaceEvent =
    std::function<bool(size_t event, int64_t* ts, Ident* pid, Ident* tid, bool* pid_interned)>;

// Appends the events `place` keeps, in `from`'s order; returns how many.
size_t AppendEvents(const Trace& from, TraceBuilder& to, const PlaceEvent& place);

}  // namespace profsh
