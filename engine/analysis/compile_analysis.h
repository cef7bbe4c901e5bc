// What torch.compile did in a trace, read off the events PyTorch 2.x records for it (the seed
// "profiling torch.compile"): "Torch-Compiled Region: F/R" spans (frame F, recompile R; a region
// nested in another is a graph break's resumption or a disabled region), CompiledFunction and
// CompiledFunctionBackward (the compiled forward and backward, linked by sequence number),
// "TorchDynamo Cache Lookup" (guards), "(dynamo_timed)" compile work, and Inductor's kernels
// (triton_* on the device, cpp_fused_* operators on the CPU). docs/ANALYSIS.md defines every
// column.
#pragma once

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/function_events.h"
#include "engine/trace/trace.h"

namespace profsh {

struct CompileAnalysis {
  // Per (region, pass, step): region, pass, frame, recompile, step, calls, cpu_time,
  // compile_time, kernels,
  // gpu_busy, gpu_idle, depth, host_wait_share, mean_launch_delay, short_kernels, verdict.
  AnalysisRows regions;
  // Per step: step, step_time, compile_time, run_time, guard_time, regions, graph_breaks,
  // recompiles, eager_islands, eager_time.
  AnalysisRows steps;
  // Runs of eager operators on a thread that compiles: step, tid, start, duration, op_time, ops,
  // first_op, last_op, region, stack.
  AnalysisRows islands;
  // Each (frame, recompile >= 1): frame, recompile, region, step, start, compile_time.
  AnalysisRows recompiles;
  // Where kernel time comes from: device, provenance, kernels, time, percentage.
  AnalysisRows provenance;
};

CompileAnalysis AnalyzeCompile(const Trace& trace, const FunctionEvents& events);

// The provenance of a device kernel from its name alone ("inductor pointwise", "cuBLAS", ...);
// "ATen" when nothing else matches.
const char* KernelProvenanceOfName(std::string_view name);

}  // namespace profsh
