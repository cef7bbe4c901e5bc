#include "engine/analysis/function_events/torch_filters.h"

#include <utility>

#include "engine/trace/kineto_schema.h"

namespace profsh {

bool IsFilteredName(std::string_view name) {
  return name == kineto::kMemoryEvent || name == kineto::kOutOfMemoryEvent ||
         name == "profiler::_record_function_enter" ||
         name == "profiler::_record_function_enter_new" ||
         name == "profiler::_record_function_exit" || name == "aten::is_leaf" ||
         name == "aten::output_nr" || name == "aten::_version";
}

bool KeepStackFrame(std::string_view frame) {
  static const std::pair<std::string_view, std::string_view> kFiltered[] = {
      {"autograd/__init__", "_make_grads"},
      {"autograd/__init__", "backward"},
      {"torch/tensor", "backward"},
      {"_internal/common_utils", "prof_callable"},
      {"_internal/common_utils", "prof_func_call"},
      {"_internal/common_utils", "prof_meth_call"},
  };
  for (const auto& [a, b] : kFiltered) {
    if (frame.find(a) != std::string_view::npos && frame.find(b) != std::string_view::npos)
      return false;
  }
  return true;
}

}  // namespace profsh
