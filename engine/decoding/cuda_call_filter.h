// Which CUDA calls a trace leaves out, as Kineto leaves them out of torch.profiler's traces:
// the runtime's noisy queries (Kineto's blocklist) and the driver's calls that neither enqueue
// device work, nor wait for it, nor manage memory. On an H200 training step, cudaGetDevice and
// the driver's queries were nine in ten of the calls CUPTI recorded.
#pragma once

#include <string_view>

namespace profsh {

bool KinetoLeavesOutCall(bool runtime, std::string_view name);

}  // namespace profsh
