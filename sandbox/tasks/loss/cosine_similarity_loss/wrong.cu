// Subtly wrong: divided by the squared norms (the square roots are forgotten).
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

extern "C" __global__ void cosine_similarity_loss(const float* predictions, const float* targets, float* out, int rows, int dim) {
  __shared__ float partial[256];
  const long long offset = static_cast<long long>(blockIdx.x) * dim;
  float dot = 0.0f, pp = 0.0f, tt = 0.0f;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float p = predictions[offset + c], t = targets[offset + c];
    dot += p * t;
    pp += p * p;
    tt += t * t;
  }
  dot = block_sum(dot, partial);
  pp = block_sum(pp, partial);
  tt = block_sum(tt, partial);
  if (threadIdx.x == 0) atomicAdd(out, (1.0f - dot / fmaxf(pp * tt, 1e-8f)) / static_cast<float>(rows));
}
