// What torch.compile's events are, read once per event template from the names PyTorch 2.x
// gives them (the seed "profiling torch.compile"; docs/ANALYSIS.md "torch.compile").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

enum class CompileRole : uint8_t {
  kNone,
  kRegion,        // Torch-Compiled Region: F/R (frame F's R-th compile; R >= 1 a recompile)
  kForward,       // CompiledFunction
  kBackward,      // CompiledFunctionBackward
  kCompileWork,   // ... (dynamo_timed)
  kGuard,         // TorchDynamo Cache Lookup
  kCppKernel,     // an Inductor C++ kernel (cpp_fused_*), recorded with enable_kernel_profile
  kTritonLaunch,  // the CPU side of an Inductor triton kernel's launch (triton_*)
};

CompileRole CompileRoleOfName(std::string_view name);

// The role of each event template (Trace::events.templates()), by its name.
std::vector<CompileRole> CompileRolesOfTemplates(const Trace& trace);

// F and R of "Torch-Compiled Region: F/R"; -1 where the text is not a number.
void ParseCompiledRegion(std::string_view name, int64_t* frame, int64_t* recompile);

// The name of a backward whose forward is unknown.
inline constexpr std::string_view kCompiledBackwardName = "CompiledFunctionBackward";

}  // namespace profsh
