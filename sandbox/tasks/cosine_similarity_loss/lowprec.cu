// Low precision: the dot product and the squared norms accumulate in half, per thread and in the
// tree; everything else right.
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

extern "C" __global__ void cosine_similarity_loss(const float* predictions, const float* targets, float* out, int rows, int dim) {
  __shared__ __half partial_half[256];
  const long long offset = static_cast<long long>(blockIdx.x) * dim;
  __half hd = __float2half(0.0f), hp = __float2half(0.0f), ht = __float2half(0.0f);
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float p = predictions[offset + c], t = targets[offset + c];
    hd = __hadd(hd, __float2half(p * t));
    hp = __hadd(hp, __float2half(p * p));
    ht = __hadd(ht, __float2half(t * t));
  }
  const float dot = block_sum_half(hd, partial_half);
  const float pp = block_sum_half(hp, partial_half);
  const float tt = block_sum_half(ht, partial_half);
  if (threadIdx.x == 0) atomicAdd(out, (1.0f - dot / (fmaxf(sqrtf(pp), 1e-8f) * fmaxf(sqrtf(tt), 1e-8f))) / static_cast<float>(rows));
}
