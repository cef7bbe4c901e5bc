// A small Kineto trace with what the GPU views read: a record_function range around an operator
// whose runtime call launches a kernel, a nested NVTX range, a copy, and a kernel launched
// outside every range. Times in µs.
#pragma once

#include <string>

#include "engine/analysis/analysis_rows.h"

namespace profsh::testing {

inline const std::string kGpuViewsTrace = R"json({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "layer1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
   "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"],
            "Sequence number": 5}},
  {"ph": "X", "cat": "nvtx", "name": "inner", "pid": 1, "tid": 1, "ts": 15, "dur": 20},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20,
   "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 40,
   "dur": 4, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 30,
   "dur": 20, "args": {"correlation": 1, "device": 0, "stream": 7, "grid": [4, 1, 1],
                       "block": [128, 1, 1]}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)",
                         "pid" : 0, "tid" : 7, "ts" : 55, "dur" : 10, "args" : {
  "correlation" : 2, "device" : 0, "stream" : 7, "bytes" : 3000000
}
},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 200,
   "dur": 5, "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 210, "dur": 10,
   "args": {"correlation": 3, "device": 0, "stream": 7, "grid": [1, 1, 1],
            "block": [32, 1, 1]}}
]
})json";

// The cell of `column` in `row`, as the table prints it.
inline std::string CellText(const AnalysisRows& rows, size_t row, const std::string& column) {
  const size_t c = rows.Column(column);
  if (c == SIZE_MAX) return "<no column " + column + ">";
  return rows.rows.cell(row, c).Format();
}

}  // namespace profsh::testing
