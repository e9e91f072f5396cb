// Reference: one block of 256 threads per sample; three passes over the sample's
// features * height * width contiguous floats: the mean, the biased variance, then the output.

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

extern "C" __global__ void layer_norm_chw(const float* x, const float* weight, const float* bias, float* out, int batch,
                                          int size, float eps) {
  __shared__ float partial[256];
  const int n = blockIdx.x;
  if (n >= batch) return;
  const float* p = x + static_cast<long long>(n) * size;
  float* q = out + static_cast<long long>(n) * size;
  float s = 0.0f;
  for (int k = threadIdx.x; k < size; k += blockDim.x) s += p[k];
  const float mean = block_sum(s, partial) / size;
  float v = 0.0f;
  for (int k = threadIdx.x; k < size; k += blockDim.x) v += (p[k] - mean) * (p[k] - mean);
  const float var = block_sum(v, partial) / size;
  const float inv = 1.0f / sqrtf(var + eps);
  for (int k = threadIdx.x; k < size; k += blockDim.x) q[k] = (p[k] - mean) * inv * weight[k] + bias[k];
}
