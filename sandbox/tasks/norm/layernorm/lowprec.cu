// Low precision: the sums of the mean and the variance accumulate in half; the rest in float.
#include <cuda_fp16.h>

__device__ float block_sum_half(float v, __half* partial) {
  partial[threadIdx.x] = __float2half(v);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = __hadd(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float total = __half2float(partial[0]);
  __syncthreads();
  return total;
}

extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* out, int rows,
                                     int cols, float eps) {
  __shared__ __half partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s = __hadd(s, __float2half(p[c]));
  const float mean = block_sum_half(__half2float(s), partial) / cols;
  __half v = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) v = __hadd(v, __float2half((p[c] - mean) * (p[c] - mean)));
  const float var = block_sum_half(__half2float(v), partial) / cols;
  const float inv = rsqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = (p[c] - mean) * inv * gamma[c] + beta[c];
}
