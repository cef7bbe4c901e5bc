#include "engine/decoding/cuda_call_filter.h"

#include <array>

namespace profsh {

namespace {

// libkineto's CuptiCbidRegistry: runtime callbacks registered as blocklisted.
constexpr std::array<std::string_view, 6> kRuntimeBlocklist = {"cudaGetDevice",
                                                               "cudaSetDevice",
                                                               "cudaGetLastError",
                                                               "cudaEventCreate",
                                                               "cudaEventCreateWithFlags",
                                                               "cudaEventDestroy"};

// Kineto keeps only the driver's kernel launches and its virtual-memory calls (cuMemCreate,
// cuMemMap, ...). profsh also keeps the driver calls a program without the runtime makes for
// the same work (copies, sets, allocations, graphs and their capture, synchronisation): the
// analyses link device work to them and the critical path needs their waits.
constexpr std::array<std::string_view, 10> kDriverPrefixesKept = {"cuLaunch",
                                                                  "cuGraph",
                                                                  "cuMem",
                                                                  "cuStreamSynchronize",
                                                                  "cuStreamWait",
                                                                  "cuStreamBeginCapture",
                                                                  "cuStreamEndCapture",
                                                                  "cuCtxSynchronize",
                                                                  "cuEventSynchronize",
                                                                  "cuEventRecord"};

}  // namespace

bool KinetoLeavesOutCall(bool runtime, std::string_view name) {
  if (runtime) {
    for (std::string_view blocked : kRuntimeBlocklist)
      if (name == blocked) return true;
    return false;
  }
  for (std::string_view kept : kDriverPrefixesKept)
    if (name.starts_with(kept)) return false;
  return true;
}

}  // namespace profsh
