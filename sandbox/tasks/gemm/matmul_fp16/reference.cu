// Reference: one output per thread, products and sum in float, one rounding at the end.
#include <cuda_fp16.h>
extern "C" __global__ void matmul_fp16(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[static_cast<long long>(row) * K + k]) * __half2float(B[static_cast<long long>(k) * N + col]);
  C[static_cast<long long>(row) * N + col] = __float2half(acc);
}
