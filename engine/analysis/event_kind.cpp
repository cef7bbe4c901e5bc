#include "engine/analysis/event_kind.h"

#include <cctype>
#include <string>

#include "engine/trace/kineto_schema.h"

namespace profsh {

EventKind KindOfCategory(std::string_view category) {
  std::string c(category);
  for (char& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // Kineto's categories in lower case; the names not in kineto_schema.h are read only here.
  using namespace kineto;
  // mtia_ccp_events: MTIA's device work (HTA's KERNEL_CATEGORY_PATTERN counts it too).
  if (c == kKernel || c == "mtia_ccp_events") return EventKind::kKernel;
  if (c == kGpuMemcpy || c == "memcpy") return EventKind::kCopy;
  if (c == kGpuMemset || c == "memset") return EventKind::kSet;
  // record_function ranges (and their GPU-side spans), and the NVTX and ITT ranges profsh's
  // collector records: what a user put there to mark their code.
  if (c == kGpuUserAnnotation || c == kUserAnnotation || c == "nvtx" || c == "itt") {
    return EventKind::kAnnotation;
  }
  // Every backend's runtime and driver calls (cuda_, mtia_, xpu_, privateuse1_...).
  if (c == "runtime" || c == "driver" || c.ends_with("_runtime") || c.ends_with("_driver")) {
    return EventKind::kRuntime;
  }
  if (c == "trace" || c == kAc2g || c == kFwdBwd || c == "async_cpu_to_gpu" || c == "cpu_to_cuda" ||
      c == "cuda_sync" || c == "cuda_event" || c == "overhead" || c == kPythonFunction ||
      c == "external_correlation" || c == "cuda_profiler_range" || c == "gpu_memory" ||
      c == kCpuInstantEvent || c == "profsh" || c == "cpu_sample") {
    return EventKind::kOther;
  }
  return EventKind::kCpuOp;
}

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kCpuOp:
      return "cpu_op";
    case EventKind::kAnnotation:
      return "annotation";
    case EventKind::kRuntime:
      return "runtime";
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kCopy:
      return "copy";
    case EventKind::kSet:
      return "set";
    case EventKind::kMemory:
      return "memory";
    case EventKind::kOther:
      break;
  }
  return "other";
}

}  // namespace profsh
