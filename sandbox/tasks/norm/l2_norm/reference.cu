// Reference: one block of 256 threads per row: strided partial sums of squares, a shared-memory tree,
// then every element divided by the row's norm.

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

extern "C" __global__ void l2_norm(const float* x, float* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c] * p[c];
  const float norm = sqrtf(block_sum(s, partial));
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] / norm;
}
