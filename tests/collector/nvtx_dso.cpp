// A shared object with its own NVTX: NVTX v3 is header-only, so this library initialises NVTX
// separately from the program that loads it, and the collector must serve both.
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) void nvtx_dso_work(int n) {
  for (int i = 0; i < n; ++i) {
    nvtxRangePushA("from the library");
    nvtxRangePop();
  }
}
