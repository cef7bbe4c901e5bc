// PyProf's kernel table (NVIDIA/PyProf, pyprof/prof/output.py): one row per kernel with the
// operator and layer that launched it, its parameters, silicon time, tensor-core use, launch
// configuration and the algorithmic FLOPs and bytes of its operator, from any trace profsh
// loads. docs/ANALYSIS.md states how each column is derived.
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"

namespace profsh {

// PyProf's TC_Whitelist (pyprof/prof/tc.py): kernel-name substrings of tensor-core kernels,
// Volta (884) to Hopper (gmma, wgmma).
const std::vector<std::string>& DefaultTensorCorePatterns();

struct KernelTableOptions {
  std::vector<std::string> tensor_core_patterns = DefaultTensorCorePatterns();
};

// idx, seq, dir, sub, layer, op, kernel, params, sil, tc, device, stream, grid, block, flops,
// bytes, tflops, gbps, flop_per_byte.
AnalysisRows KernelTable(const Trace& trace, const KernelTableOptions& options = {});

}  // namespace profsh
