// What an event is, in the words a GPU user asks with: a kernel, a copy or a set on the device,
// an annotation (record_function, NVTX and ITT ranges, and their GPU-side spans), a CPU
// operator, a runtime call (cudaLaunchKernel, ...). Decided from the event's category, as
// Kineto names them; the tables' rows and the events of t:events{} carry it as `kind`.
#pragma once

#include <string_view>

namespace profsh {

enum class EventKind : unsigned char {
  kCpuOp,
  kAnnotation,
  kRuntime,
  kKernel,
  kCopy,
  kSet,
  kMemory,  // an allocation or free record ([memory]); a row of its own when no op holds it
  kOther,   // flows, metadata, counters, syncs, Python function spans, ...
};

// The kind of a complete ('X') event of this category.
EventKind KindOfCategory(std::string_view category);

// "cpu_op", "annotation", "runtime", "kernel", "copy", "set", "memory", "other".
const char* EventKindName(EventKind kind);

}  // namespace profsh
