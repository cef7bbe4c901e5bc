// A CUDA program for the test driver (fake_cuda.cpp): two threads, one per device, launch
// kernels inside NVTX ranges on two streams each, through the driver and the runtime API; the
// first thread then copies every way, sets, allocates and frees, and launches a graph.
// Expected (per run): gemm_kernel 24 × 3 µs, relu_kernel 12 × 2 µs, graph_node 3 × 2 µs;
// per thread and step, "layer_a" holds 4 gemm launches, "layer_b" 2 relu launches.
//
// Usage: cuda_workload [STEPS [MODE [LINGER_MS]]]   (default 3 steps, mode "plain", 0 ms)
//   steps: one thread (device 0); each step is an NVTX range "step" (a step marker) that also
//          launches tail_kernel (3 ms) on stream 1 at its end; streams are synchronised only
//          after the last step, so each step's tail kernel ends after the next step began.
//          Each step also allocates 1 MiB on device 0 (cuMemAlloc), all freed after the last,
//          and asks for its device (cuCtxGetDevice: a call that launches no device work).
//   LINGER_MS: the process sleeps that long before it exits (after its last CUDA call), so
//          that windows are handed over while it runs.
//   slow:  20 ms of sleep after each step (for a run killed while it works).
//   events: as plain, but instead of the stream syncs each step records an event on stream 1
//          after the gemms, makes stream 2 wait for it (cudaStreamWaitEvent), launches
//          tail_kernel on stream 2, records a second event after it and synchronizes on that
//          (cudaEventSynchronize): waits that name the cudaEventRecord they wait for.
//   fork:  as plain, and a child forked before cuInit runs one step on one thread (device 0)
//          with its ranges named "child_layer_a" and "child_layer_b": two CUDA processes whose
//          CUPTIs both number correlations from 1. The child also launches one relu_kernel
//          from a thread that records nothing else (no thread slot) and prints
//          "loose thread TID" to stderr.
//   _exit: as plain, then ends with _exit(0) (exit()'s handlers never run).
//   handler_exit: as plain, with a SIGUSR1 handler that calls _exit(3) (the test CUPTI raises
//          it inside a record's hand-over: FAKE_CUPTI_SCENARIO=signal-in-record=N).
//   exec:  as plain, then an exec that fails, one more relu_kernel (2 µs), and an exec of
//          /bin/true (the image ends; the pid goes on).
#include <cuda.h>
#include <cupti_activity.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <thread>
#include <vector>

extern "C" {
void fakecuda_runtime_launch(CUfunction f, unsigned gx, unsigned bx, CUstream stream);
void fakecuda_copy(int kind, size_t bytes, CUstream stream);
CUgraphExec fakecuda_graph(uint32_t id, CUfunction f, int nodes);
void fakecuda_runtime_event_record(uint32_t event, CUstream stream);
void fakecuda_runtime_stream_wait_event(CUstream stream, uint32_t event);
void fakecuda_runtime_event_synchronize(uint32_t event);
}

namespace {

bool g_child = false;  // the forked child of mode "fork"

void Copies(CUcontext self, CUcontext other, CUstream stream) {
  nvtxRangePushA("copies");
  CUdeviceptr p;
  cuMemAlloc(&p, 1 << 20);
  static char host[8192];
  cuMemcpyHtoD(p, host, 4096);
  cuMemcpyDtoH(host, p, 4096);
  cuMemcpyDtoD(p, p, 4096);
  const CUpti_ActivityMemcpyKind kinds[] = {
      CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CUPTI_ACTIVITY_MEMCPY_KIND_ATOH,
      CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD,
      CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH};
  for (auto k : kinds) fakecuda_copy(k, 4096, stream);
  cuMemcpyPeer(p, self, p, other, 8192);
  cuMemsetD8(p, 0, 4096);
  CUfunction node;
  cuModuleGetFunction(&node, nullptr, "graph_node");
  cuGraphLaunch(fakecuda_graph(1, node, 3), stream);
  cuCtxSynchronize();
  cuMemFree(p);
  nvtxRangePop();
}

void Worker(int device, int steps, const char* mode, CUcontext* contexts) {
  const bool step_ranges = strcmp(mode, "steps") == 0, slow = strcmp(mode, "slow") == 0;
  const bool events = strcmp(mode, "events") == 0;
  cuCtxSetCurrent(contexts[device]);
  CUstream s1, s2;
  cuStreamCreate(&s1, 0);
  cuStreamCreate(&s2, 0);
  CUfunction gemm, relu, tail;
  cuModuleGetFunction(&gemm, nullptr, "gemm_kernel");
  cuModuleGetFunction(&relu, nullptr, "relu_kernel");
  cuModuleGetFunction(&tail, nullptr, "tail_kernel");
  std::vector<CUdeviceptr> kept;
  for (int step = 0; step < steps; ++step) {
    if (step_ranges) {
      nvtxRangePushA("step");
      kept.emplace_back();
      cuMemAlloc(&kept.back(), 1 << 20);
      CUdevice current;
      cuCtxGetDevice(&current);
    }
    nvtxRangePushA("forward");
    nvtxRangePushA(g_child ? "child_layer_a" : "layer_a");
    for (int i = 0; i < 4; ++i) cuLaunchKernel(gemm, 3, 1, 1, 256, 1, 1, 0, s1, nullptr, nullptr);
    nvtxRangePop();
    nvtxRangePushA(g_child ? "child_layer_b" : "layer_b");
    for (int i = 0; i < 2; ++i) fakecuda_runtime_launch(relu, 2, 128, s2);
    nvtxRangePop();
    nvtxRangePop();
    if (step_ranges) {
      cuLaunchKernel(tail, 3000, 1, 1, 64, 1, 1, 0, s1, nullptr, nullptr);
      nvtxRangePop();
      continue;
    }
    if (events) {
      // s2's tail waits for s1's gemms through an event; the host waits for the tail through
      // another (event ids apart per device: the test driver's events are global).
      const uint32_t gemms_done = 10 * device + 1, tail_done = 10 * device + 2;
      fakecuda_runtime_event_record(gemms_done, s1);
      fakecuda_runtime_stream_wait_event(s2, gemms_done);
      cuLaunchKernel(tail, 3000, 1, 1, 64, 1, 1, 0, s2, nullptr, nullptr);
      fakecuda_runtime_event_record(tail_done, s2);
      fakecuda_runtime_event_synchronize(tail_done);
      continue;
    }
    cuStreamSynchronize(s1);
    cuStreamSynchronize(s2);
    if (slow) {
      timespec pause{0, 20000000};
      nanosleep(&pause, nullptr);
    }
  }
  cuStreamSynchronize(s1);
  cuStreamSynchronize(s2);
  for (CUdeviceptr p : kept) cuMemFree(p);
  if (device == 0 && !step_ranges && !g_child) Copies(contexts[0], contexts[1], s1);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 3;
  const char* mode = argc > 2 ? argv[2] : "plain";
  const long linger_ms = argc > 3 ? atol(argv[3]) : 0;
  pid_t child = -1;
  if (strcmp(mode, "fork") == 0) {
    child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      g_child = true;
      steps = 1;
    }
  }
  if (strcmp(mode, "handler_exit") == 0) signal(SIGUSR1, [](int) { _exit(3); });
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUcontext contexts[2];
  for (int d = 0; d < 2; ++d) {
    CUdevice dev;
    cuDeviceGet(&dev, d);
    cuDevicePrimaryCtxRetain(&contexts[d], dev);
  }
  std::vector<std::thread> threads;
  // Step markers count per process: with one thread, a step is one iteration.
  const int workers = strcmp(mode, "steps") == 0 || g_child ? 1 : 2;
  for (int d = 0; d < workers; ++d) threads.emplace_back(Worker, d, steps, mode, contexts);
  for (auto& t : threads) t.join();
  if (g_child) {
    std::thread loose([&] {
      cuCtxSetCurrent(contexts[0]);
      CUfunction relu;
      cuModuleGetFunction(&relu, nullptr, "relu_kernel");
      cuLaunchKernel(relu, 2, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr);
      cuCtxSynchronize();
      fprintf(stderr, "loose thread %ld\n", static_cast<long>(syscall(SYS_gettid)));
    });
    loose.join();
  }
  if (strcmp(mode, "_exit") == 0) _exit(0);
  if (strcmp(mode, "exec") == 0) {
    execl("/nonexistent/profsh-test", "none", static_cast<char*>(nullptr));
    cuCtxSetCurrent(contexts[0]);
    CUfunction relu;
    cuModuleGetFunction(&relu, nullptr, "relu_kernel");
    cuLaunchKernel(relu, 2, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr);
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    return 1;
  }
  if (child > 0) {
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return 1;
  }
  if (linger_ms > 0) {
    timespec linger{linger_ms / 1000, (linger_ms % 1000) * 1000000};
    nanosleep(&linger, nullptr);
  }
  return 0;
}
