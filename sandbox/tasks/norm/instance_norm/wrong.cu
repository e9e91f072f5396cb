// Subtly wrong: the unbiased variance (divide by hw - 1), which torch's instance norm does not use.

// A shared-memory tree over the block's 256 threads; every thread gets the total.
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

extern "C" __global__ void instance_norm(const float* x, float* out, int planes, int hw, float eps) {
  __shared__ float partial[256];
  const int plane = blockIdx.x;
  if (plane >= planes) return;
  const float* p = x + static_cast<long long>(plane) * hw;
  float* q = out + static_cast<long long>(plane) * hw;
  float s = 0.0f;
  for (int j = threadIdx.x; j < hw; j += blockDim.x) s += p[j];
  const float mean = block_sum(s, partial) / hw;
  float v = 0.0f;
  for (int j = threadIdx.x; j < hw; j += blockDim.x) v += (p[j] - mean) * (p[j] - mean);
  const float var = block_sum(v, partial) / (hw - 1 > 0 ? hw - 1 : 1);
  const float inv = 1.0f / sqrtf(var + eps);
  for (int j = threadIdx.x; j < hw; j += blockDim.x) q[j] = (p[j] - mean) * inv;
}
