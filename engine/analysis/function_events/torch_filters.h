// What torch's tables leave out: utility ops (torch's _filter_name) and profiler frames of a
// call stack (_filter_stack_entry), in torch/autograd/profiler_util.py.
#pragma once

#include <string_view>

namespace profsh {

bool IsFilteredName(std::string_view name);
bool KeepStackFrame(std::string_view frame);

}  // namespace profsh
