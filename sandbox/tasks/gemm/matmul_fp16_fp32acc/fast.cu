// Faster: 64 x 64 output tiles, 16-deep slices of A and B staged in shared memory as float (zero past the edges),
// each thread accumulating a 4 x 4 block of outputs in registers.
// leap-launch: matmul_fp16_fp32acc grid=(ceil_div(N, 64), ceil_div(M, 64)) block=(16, 16)
#include <cuda_fp16.h>

extern "C" __global__ void matmul_fp16_fp32acc(const __half* A, const __half* B, float* C, int M, int N, int K) {
  __shared__ float As[16][64 + 1];  // As[k][row]
  __shared__ float Bs[16][64];      // Bs[k][col]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int l = 0; l < 4; ++l) {
      const int idx = tid + l * 256;
      const int ar = idx / 16, ak = idx % 16;
      As[ak][ar] = (m0 + ar < M && k0 + ak < K) ? __half2float(A[static_cast<long long>(m0 + ar) * K + k0 + ak]) : 0.0f;
      const int bk = idx / 64, bc = idx % 64;
      Bs[bk][bc] = (k0 + bk < K && n0 + bc < N) ? __half2float(B[static_cast<long long>(k0 + bk) * N + n0 + bc]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = m0 + ty + 16 * i, col = n0 + tx + 16 * j;
      if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc[i][j];
    }
}
