// Low precision: the dot product is accumulated in bfloat16 with __hfma; everything else is right.
#include <cuda_bf16.h>

extern "C" __global__ void matmul_bf16_fp32acc(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N,
                                               int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  __nv_bfloat16 acc = __float2bfloat16(0.0f);
  for (int k = 0; k < K; ++k) acc = __hfma(A[static_cast<long long>(row) * K + k], B[static_cast<long long>(k) * N + col], acc);
  C[static_cast<long long>(row) * N + col] = __bfloat162float(acc);
}
