// Does not compile: rsqrt of a float and a pointer.
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

extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* out, int rows,
                                     int cols, float eps) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
  const float mean = block_sum(s, partial) / cols;
  float v = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) v += (p[c] - mean) * (p[c] - mean);
  const float var = block_sum(v, partial) / cols;
  const float inv = rsqrtf(var + gamma);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = (p[c] - mean) * inv * gamma[c] + beta[c];
}
