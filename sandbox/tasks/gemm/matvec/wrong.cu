// Wrong: the strided loop stops one column early (k < K - 1), dropping the last term of every row.
extern "C" __global__ void matvec(const float* A, const float* x, float* y, int M, int K) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  const float* a = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = threadIdx.x; k < K - 1; k += blockDim.x) acc += a[k] * x[k];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = partial[0];
}
