// Low precision: the dot product accumulates in half; the operands and the result stay float.
#include <cuda_fp16.h>

extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  __half acc = __float2half(0.0f);
  for (int k = 0; k < K; ++k)
    acc = __hadd(acc, __float2half(A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col]));
  C[static_cast<long long>(row) * N + col] = __half2float(acc);
}
