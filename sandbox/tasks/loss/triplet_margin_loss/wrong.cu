// Subtly wrong: squared distances (the square roots are forgotten).
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

extern "C" __global__ void triplet_margin_loss(const float* anchor, const float* positive, const float* negative, float* out, int rows, int dim, float margin) {
  __shared__ float partial[256];
  const long long offset = static_cast<long long>(blockIdx.x) * dim;
  float sp = 0.0f, sn = 0.0f;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float dp = anchor[offset + c] - positive[offset + c] + 1e-6f;
    const float dn = anchor[offset + c] - negative[offset + c] + 1e-6f;
    sp += dp * dp;
    sn += dn * dn;
  }
  sp = block_sum(sp, partial);
  sn = block_sum(sn, partial);
  if (threadIdx.x == 0) atomicAdd(out, fmaxf(sp - sn + margin, 0.0f) / static_cast<float>(rows));
}
