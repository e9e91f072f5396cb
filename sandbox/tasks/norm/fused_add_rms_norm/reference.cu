// Reference: add and store the residual while summing its squares, a shared-memory tree, then scale.
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

extern "C" __global__ void fused_add_rms_norm(const float* x, float* residual, const float* weight, float* out,
                                              int rows, int cols, float eps) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float h = residual[base + c] + x[base + c];
    residual[base + c] = h;
    s += h * h;
  }
  const float inv = 1.0f / sqrtf(block_sum(s, partial) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = residual[base + c] * inv * weight[c];
}
