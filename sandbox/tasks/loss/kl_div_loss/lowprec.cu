// Low precision: the row's sums (of exp and of the KL terms) accumulate in half, per thread and in
// the tree; everything else right.
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

extern "C" __global__ void kl_div_loss(const float* pred_logits, const float* target_logits, float* out, int rows, int cols) {
  __shared__ float partial[256];
  __shared__ __half partial_half[256];
  const long long offset = static_cast<long long>(blockIdx.x) * cols;
  const float* a = pred_logits + offset;
  const float* b = target_logits + offset;
  float ma = -3.0e38f, mb = -3.0e38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    ma = fmaxf(ma, a[c]);
    mb = fmaxf(mb, b[c]);
  }
  ma = block_max(ma, partial);
  mb = block_max(mb, partial);
  __half sa = __float2half(0.0f), sb = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    sa = __hadd(sa, __float2half(expf(a[c] - ma)));
    sb = __hadd(sb, __float2half(expf(b[c] - mb)));
  }
  const float log_sum_a = ma + logf(block_sum_half(sa, partial_half));
  const float log_sum_b = mb + logf(block_sum_half(sb, partial_half));
  __half kl = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float log_t = b[c] - log_sum_b, log_p = a[c] - log_sum_a;
    kl = __hadd(kl, __float2half(expf(log_t) * (log_t - log_p)));
  }
  const float total = block_sum_half(kl, partial_half);
  if (threadIdx.x == 0) atomicAdd(out, total / static_cast<float>(rows));
}
