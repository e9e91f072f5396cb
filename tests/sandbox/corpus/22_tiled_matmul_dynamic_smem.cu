// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: tiled_matmul
#include <cuda_runtime.h>
#define TILE 32

extern "C" __global__ void __launch_bounds__(TILE * TILE) tiled_matmul(const float* A, const float* B, float* C, int N) {
  extern __shared__ float smem[];
  float* As = smem;
  float* Bs = smem + TILE * TILE;
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (N + TILE - 1) / TILE; ++t) {
    As[threadIdx.y * TILE + threadIdx.x] = (row < N && t * TILE + threadIdx.x < N) ? A[row * N + t * TILE + threadIdx.x] : 0.f;
    Bs[threadIdx.y * TILE + threadIdx.x] = (col < N && t * TILE + threadIdx.y < N) ? B[(t * TILE + threadIdx.y) * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y * TILE + k] * Bs[k * TILE + threadIdx.x];
    __syncthreads();
  }
  if (row < N && col < N) C[row * N + col] = acc;
}
