// Kernels on two streams, copies both ways, a memset, inside NVTX ranges: run on a real GPU
// under profsh with the cuda activity (check_gpu.py). Expected: 20 scale kernels (10 a stream),
// 11 add kernels (one on stream 1 after an event wait), 2 copies HtoD, 1 copy DtoH, 1 memset.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <vector>

__global__ void scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void add(float* x, const float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

int main() {
  const int n = 1 << 20;
  std::vector<float> host(n, 1.0f);
  float *x, *y;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) return 1;
  cudaMalloc(&y, n * sizeof(float));
  cudaStream_t s[2];
  for (auto& st : s) cudaStreamCreate(&st);
  nvtxRangePushA("upload");
  cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(y, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(y, 0, n * sizeof(float));
  nvtxRangePop();
  nvtxRangePushA("compute");
  for (int i = 0; i < 10; ++i) {
    scale<<<n / 256, 256, 0, s[0]>>>(x, n, 1.01f);
    scale<<<n / 256, 256, 0, s[1]>>>(y, n, 0.99f);
  }
  // Stream 1 waits for stream 0 through an event, and the host for stream 1 through another
  // record of it: profsh's Stream Wait Event and Event Sync name these cudaEventRecord calls.
  cudaEvent_t done;
  cudaEventCreate(&done);
  cudaEventRecord(done, s[0]);
  cudaStreamWaitEvent(s[1], done, 0);
  add<<<n / 256, 256, 0, s[1]>>>(y, x, n);
  cudaEventRecord(done, s[1]);
  cudaEventSynchronize(done);
  cudaDeviceSynchronize();
  for (int i = 0; i < 10; ++i) add<<<n / 256, 256>>>(x, y, n);
  nvtxRangePop();
  cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaDeviceSynchronize();
  std::printf("x[0] = %f\n", host[0]);
  return 0;
}
