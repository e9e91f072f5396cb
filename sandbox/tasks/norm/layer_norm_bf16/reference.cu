// Reference: one block of 256 threads per row; bfloat16 values widened to float, two passes (the mean,
// then the biased variance around it) through a shared-memory tree, the output rounded to bfloat16.
#include <cuda_bf16.h>

// A shared-memory tree over the block's 256 threads; every thread gets the total.
__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void layer_norm_bf16(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias,
                                           __nv_bfloat16* out, int rows, int cols, float eps) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  __nv_bfloat16* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __bfloat162float(p[c]);
  const float mean = block_sum(s, partial) / cols;
  float v = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = __bfloat162float(p[c]) - mean;
    v += d * d;
  }
  const float inv = 1.0f / sqrtf(block_sum(v, partial) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float y = (__bfloat162float(p[c]) - mean) * inv * __bfloat162float(weight[c]) + __bfloat162float(bias[c]);
    q[c] = __float2bfloat16(y);
  }
}
