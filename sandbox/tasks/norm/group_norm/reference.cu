// Reference: one block of 256 threads per (image, group). A group's channels are adjacent planes, so
// the group is one contiguous span of (channels / groups) * hw floats. Three passes: the mean, the
// biased variance, then the normalised output scaled and shifted per channel.

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

extern "C" __global__ void group_norm(const float* x, const float* weight, const float* bias, float* out, int batch,
                                      int channels, int groups, int hw, float eps) {
  __shared__ float partial[256];
  const int g = blockIdx.x % groups, n = blockIdx.x / groups;
  if (n >= batch) return;
  const int per_group = channels / groups;
  const long long span = static_cast<long long>(per_group) * hw;
  const long long start = (static_cast<long long>(n) * channels + static_cast<long long>(g) * per_group) * hw;
  const float* p = x + start;
  float* q = out + start;
  float s = 0.0f;
  for (long long k = threadIdx.x; k < span; k += blockDim.x) s += p[k];
  const float mean = block_sum(s, partial) / span;
  float v = 0.0f;
  for (long long k = threadIdx.x; k < span; k += blockDim.x) v += (p[k] - mean) * (p[k] - mean);
  const float var = block_sum(v, partial) / span;
  const float inv = 1.0f / sqrtf(var + eps);
  for (long long k = threadIdx.x; k < span; k += blockDim.x) {
    const int c = g * per_group + static_cast<int>(k / hw);
    q[k] = (p[k] - mean) * inv * weight[c] + bias[c];
  }
}
