// Low precision: the reference's three passes with the mean's and the variance's sums accumulated in
// __half instead of float; everything else as in the reference.
#include <cuda_fp16.h>

__device__ __half block_sum_half(__half v, __half* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = __hadd(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const __half total = partial[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void layer_norm_chw(const float* x, const float* weight, const float* bias, float* out, int batch,
                                          int size, float eps) {
  __shared__ __half partial[256];
  const int n = blockIdx.x;
  if (n >= batch) return;
  const float* p = x + static_cast<long long>(n) * size;
  float* q = out + static_cast<long long>(n) * size;
  __half s = __float2half(0.0f);
  for (int k = threadIdx.x; k < size; k += blockDim.x) s = __hadd(s, __float2half(p[k]));
  const float mean = __half2float(block_sum_half(s, partial)) / size;
  __half v = __float2half(0.0f);
  for (int k = threadIdx.x; k < size; k += blockDim.x) v = __hadd(v, __float2half((p[k] - mean) * (p[k] - mean)));
  const float var = __half2float(block_sum_half(v, partial)) / size;
  const float inv = 1.0f / sqrtf(var + eps);
  for (int k = threadIdx.x; k < size; k += blockDim.x) q[k] = (p[k] - mean) * inv * weight[k] + bias[k];
}
