// Reference: the sum of squares in float through a shared-memory tree, then one pass to scale.
#include <cuda_fp16.h>

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

extern "C" __global__ void rms_norm_last_fp16(const __half* x, const __half* weight, __half* out, int rows,
                                              int cols, float eps) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = x + static_cast<long long>(row) * cols;
  __half* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = __half2float(p[c]);
    s += v * v;
  }
  const float inv = 1.0f / sqrtf(block_sum(s, partial) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    q[c] = __float2half(__half2float(p[c]) * inv * __half2float(weight[c]));
}
