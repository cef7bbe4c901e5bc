// Five SGEMMs through cuBLAS inside an NVTX range (check_gpu.py expects at least five kernels
// whose names mention gemm, each launched inside "gemm").
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

int main() {
  const int n = 512;
  float *a, *b, *c;
  cudaMalloc(&a, n * n * sizeof(float));
  cudaMalloc(&b, n * n * sizeof(float));
  cudaMalloc(&c, n * n * sizeof(float));
  cudaMemset(a, 0, n * n * sizeof(float));
  cudaMemset(b, 0, n * n * sizeof(float));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  const float one = 1.0f, zero = 0.0f;
  nvtxRangePushA("gemm");
  for (int i = 0; i < 5; ++i)
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  cudaDeviceSynchronize();
  nvtxRangePop();
  cublasDestroy(h);
  return 0;
}
