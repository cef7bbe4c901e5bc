// The figures the plugin's rules read (PluginRuleInputs), gathered from the views that compute
// them the plugin's way (step_breakdown, gpu_summary, kernel_summary, memory_summary, the host
// tree) and from the event model (the plugin's EventParser flags).
#pragma once

#include "engine/analysis/tensorboard/gpu_summary.h"
#include "engine/analysis/tensorboard/kernel_summary.h"
#include "engine/analysis/tensorboard/recommendations.h"
#include "engine/analysis/tensorboard/step_breakdown.h"
#include "engine/trace/trace.h"

namespace profsh {

// From views a caller already has (the overview computes each once).
PluginRuleInputs PluginRuleInputsFrom(const Trace& trace, const StepBreakdown& steps,
                                      const GpuSummary& gpus, const KernelSummary& kernels);
// Computing the views.
PluginRuleInputs PluginRuleInputsOf(const Trace& trace);

// tensor_cores_parser.py's tc_eligible_ops_kernel_ratio: the kernel time that the runtime calls
// of a "bottom" tensor-core eligible operator launched (one with no eligible operator under it;
// an operator is eligible by name, or when an operator under it is or its own calls launched
// tensor-core kernels), over the kernel time that the calls of any operator launched. A call
// belongs to the first range with its External id, as the plugin gives it. 0 without such
// kernels.
double TensorCoreEligibleKernelRatio(const EventModel& model);

}  // namespace profsh
