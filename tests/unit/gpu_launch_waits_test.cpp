// Which CUDA calls a window waits for (engine/decoding/gpu_launch_waits.h), on records made here:
// launches wait until their device work comes (in either order), calls that launch nothing,
// failed calls and launches captured into a graph do not, graph launches are counted.
#include <gtest/gtest.h>

#include <string>

#include "engine/decoding/gpu_launch_waits.h"

namespace profsh {
namespace {

namespace st = stream;

struct Calls {
  StreamNames names;
  GpuLaunchWaits waits;
  uint64_t next_name = 1;

  // A runtime or driver call named `name` by thread `tid` at `begin`, correlation `corr`.
  void Call(const std::string& name, uint64_t begin, uint64_t corr, int64_t tid = 1,
            uint64_t result = 0) {
    names.DefineString(next_name, name);
    st::GpuRecord r;
    st::GpuApi{.start = begin,
               .end = begin + 1,
               .tid = static_cast<uint64_t>(tid),
               .correlation = corr,
               .name = next_name++,
               .api = st::kGpuApiRuntime,
               .return_value = result}
        .PackInto(&r);
    waits.Observe(r);
  }
  void Work(uint8_t kind, uint64_t start, uint64_t corr, uint64_t graph = 0) {
    st::GpuRecord r;
    if (kind == st::kGpuKernel) {
      st::GpuKernel{.start = start, .end = start + 5, .correlation = corr, .graph = graph}.PackInto(
          &r);
    } else {
      st::GpuMemcpy{.start = start, .end = start + 5, .correlation = corr, .graph = graph}.PackInto(
          &r);
    }
    waits.Observe(r);
  }
};

TEST(GpuLaunchWaits, ClassifiesCallsByName) {
  for (const char* n :
       {"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel", "cuLaunchKernel", "cuLaunchKernelEx",
        "cuLaunchCooperativeKernel", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemsetAsync",
        "cuMemcpyHtoD_v2", "cuMemsetD8_v2", "cudaLaunch", "cuLaunchGrid"})
    EXPECT_EQ(ClassifyCall(n), LaunchKind::kDeviceWork) << n;
  for (const char* n : {"cudaGetDevice", "cudaDeviceSynchronize", "cuStreamSynchronize",
                        "cudaMalloc", "cuMemAlloc_v2", "cudaLaunchHostFunc", "cuLaunchHostFunc",
                        "cudaEventRecord", "cudaRuntime_123"})
    EXPECT_EQ(ClassifyCall(n), LaunchKind::kNone) << n;
  EXPECT_EQ(ClassifyCall("cudaGraphLaunch"), LaunchKind::kGraph);
  EXPECT_EQ(ClassifyCall("cuGraphLaunch"), LaunchKind::kGraph);
  EXPECT_EQ(ClassifyCall("cudaStreamBeginCapture"), LaunchKind::kCaptureBegin);
  EXPECT_EQ(ClassifyCall("cuStreamEndCapture"), LaunchKind::kCaptureEnd);
}

TEST(GpuLaunchWaits, LaunchesWaitUntilTheirWorkComesInEitherOrder) {
  Calls c;
  c.Call("cuLaunchKernel", 100, 1);
  c.Call("cudaMemcpyAsync", 110, 2);
  c.Work(st::kGpuMemset, 125, 3);  // before its call
  c.Call("cudaMemsetAsync", 120, 3);
  c.Call("cudaGetDevice", 130, 4);
  c.Call("cudaDeviceSynchronize", 140, 5);
  c.waits.Classify(c.names);
  EXPECT_EQ(c.waits.Waiting(0, 200), 2u);  // the kernel and the copy
  EXPECT_EQ(c.waits.Waiting(105, 200), 1u);
  EXPECT_EQ(c.waits.Waiting(200, 300), 0u);
  c.Work(st::kGpuKernel, 5000, 1);
  EXPECT_EQ(c.waits.Waiting(0, 200), 1u);
  c.Work(st::kGpuMemcpy, 6000, 2);
  EXPECT_EQ(c.waits.Waiting(0, 200), 0u);
  const GpuLaunchWaits::Released r = c.waits.Release(0, 200);
  EXPECT_EQ(r.unreported, 0u);
  EXPECT_EQ(c.waits.tracked(), 0u);
}

TEST(GpuLaunchWaits, CountsWhatNeverCameAndLetsGoOfFailedAndCapturedCalls) {
  Calls c;
  c.Call("cuLaunchKernel", 100, 1);
  c.Call("cuLaunchKernel", 110, 2, 1, /*result=*/700);  // failed: launched nothing
  c.Call("cudaStreamBeginCapture", 120, 3, 2);
  c.Call("cudaLaunchKernel", 130, 4, 2);  // captured into a graph
  c.Call("cudaLaunchKernel", 135, 5, 1);  // another thread: runs
  c.Call("cudaStreamEndCapture", 140, 6, 2);
  c.Call("cudaLaunchKernel", 150, 7, 2);  // after the capture: runs
  c.Call("cudaGraphLaunch", 160, 8);
  c.Work(st::kGpuKernel, 900, 8, /*graph=*/1);  // a node: its launch is not waited for
  c.Call("cuLaunchKernel", 300, 9);             // the next window's
  c.waits.Classify(c.names);
  EXPECT_EQ(c.waits.Waiting(0, 200), 3u);  // 1, 5 and 7
  const GpuLaunchWaits::Released r = c.waits.Release(0, 200);
  EXPECT_EQ(r.unreported, 3u);
  EXPECT_EQ(r.graphs, 1u);
  EXPECT_EQ(c.waits.Waiting(200, 400), 1u);
  // Work of a call handed over with an older window is let go with the next one.
  c.Work(st::kGpuKernel, 150, 1);
  c.Work(st::kGpuKernel, 350, 9);
  EXPECT_EQ(c.waits.Release(200, 400).unreported, 0u);
  EXPECT_EQ(c.waits.tracked(), 0u);
}

TEST(GpuLaunchWaits, CallsWhoseNameNeverCameAreNotWaitedFor) {
  Calls c;
  st::GpuRecord r;
  // Its name was never defined (the collector's string table refused it).
  st::GpuApi{.start = 100, .correlation = 1, .name = 999}.PackInto(&r);
  c.waits.Observe(r);
  c.waits.Classify(c.names);
  EXPECT_EQ(c.waits.Waiting(0, 200), 0u);
  EXPECT_EQ(c.waits.tracked(), 0u);
}

}  // namespace
}  // namespace profsh
