// A hang as a trace: each range and operator still open in a process when the watchdog fired
// runs from its begin to that moment (unterminated, category "hang", with the collective's
// sequence number where it is one), on its thread's track; the "profsh" metadata's "hang"
// member holds every process's report (decoding/hang_watch.h). A flight recorder dump joins it
// to the steps it kept, so that the dump names what each thread is blocked in.
#pragma once

#include <memory>

#include "engine/session/watchdog.h"
#include "engine/trace/trace.h"

namespace profsh {

inline constexpr char kHangCategory[] = "hang";

// The open ranges of process `pid` in `hang` (its state there), timed from `origin_ns`.
std::unique_ptr<Trace> HangTrace(const HangFinding& hang, int64_t pid, int64_t origin_ns);

}  // namespace profsh
