// Subtly wrong: the bias is added after the activation, gelu(x W^T) + b.
#include <cuda_fp16.h>

extern "C" __global__ void linear_bias_gelu(const __half* x, const __half* W, const __half* b, __half* y, int M, int N,
                                            int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += __half2float(x[static_cast<long long>(m) * K + k]) * __half2float(W[static_cast<long long>(n) * K + k]);
  const float g = 0.5f * acc * (1.0f + erff(acc * 0.70710678118654752f));
  y[static_cast<long long>(m) * N + n] = __float2half(g + __half2float(b[n]));
}
