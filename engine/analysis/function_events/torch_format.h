// What differs between torch 1.13's operator view and 2.x's: which torch wrote a trace, and the
// float arithmetic 2.x does on times (its FunctionEvents hold (t - trace start) / 1000 as
// Python floats, so its tables' last digits follow those floats, not exact nanoseconds).
#pragma once

#include <cstdint>

#include "engine/analysis/function_events.h"
#include "engine/trace/trace.h"

namespace profsh {

// torch 2.x's when some event carries an argument only 2.x writes (the record function id and
// the concrete inputs since 2.1, input strides since 2.2); 1.13's otherwise.
TorchFormat DetectTorchFormat(const Trace& trace);

// torch 2.x's trace start (result.trace_start_ns()), which its float times count from: the
// start of the profiler's "Trace" span ("PyTorch Profiler (N)"); the first event's start when a
// trace has no such span.
int64_t TorchTraceStartNs(const Trace& trace);

// Python's int / 1000: the exact quotient rounded once to a double (ties to even). Converting
// the integer to a double first would round it twice, and times since the epoch (about 2^60 ns)
// have no exact double.
double PythonDivide1000(int64_t a);

}  // namespace profsh
