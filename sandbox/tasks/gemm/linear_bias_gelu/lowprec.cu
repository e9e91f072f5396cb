// Low precision: the dot product is accumulated in __half with __hfma; bias and gelu in float as specified.
#include <cuda_fp16.h>

extern "C" __global__ void linear_bias_gelu(const __half* x, const __half* W, const __half* b, __half* y, int M, int N,
                                            int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  __half acc = __float2half(0.0f);
  for (int k = 0; k < K; ++k) acc = __hfma(x[static_cast<long long>(m) * K + k], W[static_cast<long long>(n) * K + k], acc);
  const float v = __half2float(acc) + __half2float(b[n]);
  y[static_cast<long long>(m) * N + n] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
}
