#include "engine/analysis/event_kind.h"

#include "engine/analysis/model/event_roles.h"

namespace profsh {

// One classification: the event model's (model/event_roles.cpp).
EventKind KindOfCategory(std::string_view category) {
  return ClassifyCategory(category).kind;
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
