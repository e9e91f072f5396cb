// Wrong: reads B as if it were stored (N x K).
#include <cuda_bf16.h>
extern "C" __global__ void matmul_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[static_cast<long long>(row) * K + k]) * __bfloat162float(B[static_cast<long long>(col) * K + k]);
  C[static_cast<long long>(row) * N + col] = __float2bfloat16(acc);
}
