// The plugin's tensor-core lists (torch_tb_profiler 041e7ce, profiler/tensor_core.py): kernels
// whose name holds one of its patterns use tensor cores (TC_Allowlist, PyProf's list of 2021);
// operators so named are eligible for them (TC_OP_Allowlist, autocast's lower-precision ops and
// their backward nodes).
#pragma once

#include <string_view>

namespace profsh {

bool PluginTensorCoreKernel(std::string_view kernel_name);
bool PluginTensorCoreEligibleOperator(std::string_view operator_name);

}  // namespace profsh
