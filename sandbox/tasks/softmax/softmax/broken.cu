// Does not compile: a missing semicolon after the max loop.
extern "C" __global__ void softmax(const float* x, float* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float m = __int_as_float(0xff800000);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, p[c])
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = expf(p[c] - partial[0]);
}
