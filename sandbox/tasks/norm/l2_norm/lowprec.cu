// Low precision: the reference with the row's sum of squares accumulated in __half instead of float;
// everything else as in the reference.
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

extern "C" __global__ void l2_norm(const float* x, float* out, int rows, int cols) {
  __shared__ __half partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s = __hadd(s, __float2half(p[c] * p[c]));
  const float norm = sqrtf(__half2float(block_sum_half(s, partial)));
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] / norm;
}
