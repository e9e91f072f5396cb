// Faster: 64 x 64 output tiles, 16-deep slices of x and W staged in shared memory as float (zero past the edges),
// each thread accumulating a 4 x 4 block in registers; bias and gelu in the epilogue.
// leap-launch: linear_bias_gelu grid=(ceil_div(N, 64), ceil_div(M, 64)) block=(16, 16)
#include <cuda_fp16.h>

extern "C" __global__ void linear_bias_gelu(const __half* x, const __half* W, const __half* b, __half* y, int M, int N,
                                            int K) {
  __shared__ float xs[16][64 + 1];  // xs[k][row of x]
  __shared__ float ws[16][64 + 1];  // ws[k][row of W]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int l = 0; l < 4; ++l) {
      const int idx = tid + l * 256;
      const int r = idx / 16, k = idx % 16;
      xs[k][r] = (m0 + r < M && k0 + k < K) ? __half2float(x[static_cast<long long>(m0 + r) * K + k0 + k]) : 0.0f;
      ws[k][r] = (n0 + r < N && k0 + k < K) ? __half2float(W[static_cast<long long>(n0 + r) * K + k0 + k]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      float a[4], w[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = xs[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) w[j] = ws[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * w[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < M && n < N) {
        const float v = acc[i][j] + __half2float(b[n]);
        y[static_cast<long long>(m) * N + n] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
      }
    }
}
