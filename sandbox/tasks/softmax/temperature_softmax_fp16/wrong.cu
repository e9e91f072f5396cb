#include <math_constants.h>
// Subtly wrong: the temperature is applied after the softmax's exponent is taken (exp(x - m) / T), which a
// normalisation then cancels: the output is the plain softmax, as if T were 1.
#include <cuda_fp16.h>

extern "C" __global__ void temperature_softmax_fp16(const __half* logits, __half* out, int rows, int vocab,
                                                    float temperature) {
  __shared__ float partial[128];
  __shared__ float row_max, row_sum;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = logits + static_cast<long long>(row) * vocab;
  __half* q = out + static_cast<long long>(row) * vocab;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, __half2float(p[c]));
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = -CUDART_INF_F;
    for (int t = 0; t < blockDim.x; ++t) v = fmaxf(v, partial[t]);
    row_max = v;
  }
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) s += expf(__half2float(p[c]) - row_max) / temperature;
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
    for (int t = 0; t < blockDim.x; ++t) v += partial[t];
    row_sum = v;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < vocab; c += blockDim.x)
    q[c] = __float2half(expf(__half2float(p[c]) - row_max) / temperature / row_sum);
}
