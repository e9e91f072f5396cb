// Does not compile: log_sum_b is declared twice.
// Shared-memory trees over the block (blockDim.x a power of two); every thread gets the result.
__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();  // all have read partial[0] before the next tree overwrites it
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
  float sa = 0.0f, sb = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    sa += expf(a[c] - ma);
    sb += expf(b[c] - mb);
  }
  const float log_sum_a = ma + logf(block_sum(sa, partial));
  const float log_sum_b = mb + logf(block_sum(sb, partial));
  float log_sum_b = 0.0f;
  float kl = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float log_t = b[c] - log_sum_b, log_p = a[c] - log_sum_a;
    kl += expf(log_t) * (log_t - log_p);
  }
  const float total = block_sum(kl, partial);
  if (threadIdx.x == 0) atomicAdd(out, total / static_cast<float>(rows));
}
