// Subtly wrong: the statistics cover the first image's plane only (count = hw, not batch * hw).

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

extern "C" __global__ void batch_norm(const float* x, const float* weight, const float* bias, float* out, int batch,
                                      int channels, int hw, float eps) {
  __shared__ float partial[256];
  const int c = blockIdx.x;
  if (c >= channels) return;
  const long long count = hw;
  float s = 0.0f;
  for (long long k = threadIdx.x; k < count; k += blockDim.x) {
    const long long n = k / hw, j = k % hw;
    s += x[(n * channels + c) * hw + j];
  }
  const float mean = block_sum(s, partial) / count;
  float v = 0.0f;
  for (long long k = threadIdx.x; k < count; k += blockDim.x) {
    const long long n = k / hw, j = k % hw;
    const float d = x[(n * channels + c) * hw + j] - mean;
    v += d * d;
  }
  const float var = block_sum(v, partial) / count;
  const float scale = weight[c] / sqrtf(var + eps);
  for (long long k = threadIdx.x; k < count; k += blockDim.x) {
    const long long n = k / hw, j = k % hw;
    const long long at = (n * channels + c) * hw + j;
    out[at] = (x[at] - mean) * scale + bias[c];
  }
}
