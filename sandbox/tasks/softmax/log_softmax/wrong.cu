// Subtly wrong: log(sum(exp(x))) without subtracting the row maximum, which overflows for inputs above ~88.
__device__ float block_reduce(float v, float* partial, bool take_max) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = partial[threadIdx.x + stride];
      partial[threadIdx.x] = take_max ? fmaxf(partial[threadIdx.x], other) : partial[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void log_softmax(const float* x, float* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float m = -__int_as_float(0x7f800000);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, p[c]);
  const float row_max = block_reduce(m, partial, true);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(p[c]);
  const float log_sum = logf(block_reduce(s, partial, false));
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] - log_sum;
}
