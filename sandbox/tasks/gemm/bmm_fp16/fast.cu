// Faster: 16 x 16 tiles of both operands converted to float once and staged in shared memory, so
// every element is read from global memory once per tile instead of once per output; float
// accumulation, one rounding per output.
#include <cuda_fp16.h>
#define TILE 16
extern "C" __global__ void bmm_fp16(const __half* A, const __half* B, __half* C, int batch, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  const long long b = blockIdx.z;
  A += b * M * K;
  B += b * K * N;
  C += b * M * N;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? __half2float(A[static_cast<long long>(row) * K + k0 + tx]) : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? __half2float(B[static_cast<long long>(k0 + ty) * N + col]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = __float2half(acc);
}
