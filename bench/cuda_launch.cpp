// Time per kernel launch on the test CUDA driver (tests/cuda_double), with or without profsh's
// cuda activity attached: `cuda_launch N` prints ns per cuLaunchKernel over N launches (after a
// warm-up) and the launches per second. Run bare and under `profsh run --activities cuda`
// (bench/cuda_bench.sh) for the added time per launch.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev;
  CUcontext ctx;
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  CUstream stream;
  cuStreamCreate(&stream, 0);
  CUfunction f;
  cuModuleGetFunction(&f, nullptr, "bench_kernel");
  for (int i = 0; i < 1000; ++i) cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  const double t0 = Seconds();
  for (long i = 0; i < n; ++i) cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  const double t1 = Seconds();
  printf("%ld launches: %.1f ns per launch, %.2f M launches/s\n", n, (t1 - t0) * 1e9 / n,
         n / (t1 - t0) / 1e6);
  return 0;
}
