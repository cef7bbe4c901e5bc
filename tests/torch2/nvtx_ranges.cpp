// NVTX ranges for Python test workloads through ctypes (Debian's torch is built without CUDA, so
// torch.cuda.nvtx is not there): NVTX v3 is header-only, and this library's copy reaches the
// collector through NVTX_INJECTION64_PATH like any program's.
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) void profsh_test_push(const char* name) {
  nvtxRangePushA(name);
}

extern "C" __attribute__((visibility("default"))) void profsh_test_pop() {
  nvtxRangePop();
}
