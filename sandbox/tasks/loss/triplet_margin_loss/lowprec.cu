// Low precision: the sums of squares accumulate in half, per thread and in the tree; everything
// else right.
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

extern "C" __global__ void triplet_margin_loss(const float* anchor, const float* positive, const float* negative, float* out, int rows, int dim, float margin) {
  __shared__ __half partial_half[256];
  const long long offset = static_cast<long long>(blockIdx.x) * dim;
  __half hp = __float2half(0.0f), hn = __float2half(0.0f);
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float dp = anchor[offset + c] - positive[offset + c] + 1e-6f;
    const float dn = anchor[offset + c] - negative[offset + c] + 1e-6f;
    hp = __hadd(hp, __float2half(dp * dp));
    hn = __hadd(hn, __float2half(dn * dn));
  }
  const float sp = block_sum_half(hp, partial_half);
  const float sn = block_sum_half(hn, partial_half);
  if (threadIdx.x == 0) atomicAdd(out, fmaxf(sqrtf(sp) - sqrtf(sn) + margin, 0.0f) / static_cast<float>(rows));
}
