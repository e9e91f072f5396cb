// Low precision: the row's sum of exponentials accumulates in half (per thread and in the tree);
// everything else right.
#include <cuda_fp16.h>

// The block's tree kept in half.
__device__ float block_sum_half(__half v, __half* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = __hadd(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float total = __half2float(partial[0]);
  __syncthreads();
  return total;
}

__device__ float block_max(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void cross_entropy_loss(const float* logits, const int* targets, float* out, int rows, int classes) {
  __shared__ float partial[256];
  __shared__ __half partial_half[256];
  const int row = blockIdx.x;
  const float* x = logits + static_cast<long long>(row) * classes;
  float m = -3.0e38f;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) m = fmaxf(m, x[c]);
  m = block_max(m, partial);
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < classes; c += blockDim.x) s = __hadd(s, __float2half(expf(x[c] - m)));
  const float total = block_sum_half(s, partial_half);
  if (threadIdx.x == 0) atomicAdd(out, (m + logf(total) - x[targets[row]]) / static_cast<float>(rows));
}
