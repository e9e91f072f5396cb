// Does not compile: the row's logits are declared const but written.
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

extern "C" __global__ void cross_entropy_loss(const float* logits, const int* targets, float* out, int rows, int classes) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  const float* x = logits + static_cast<long long>(row) * classes;
  x[0] = 0.0f;
  float m = -3.0e38f;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) m = fmaxf(m, x[c]);
  m = block_max(m, partial);
  float s = 0.0f;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) s += expf(x[c] - m);
  s = block_sum(s, partial);
  if (threadIdx.x == 0) atomicAdd(out, (m + logf(s) - x[targets[row]]) / static_cast<float>(rows));
}
