// Reference: strided partial sums, then a shared-memory tree with a barrier per level.
extern "C" __global__ void row_sum(const float* x, float* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  const float* p = x + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0 && row < rows) out[row] = partial[0];
}
