// Wrong: reads B as if it were stored (k x l).
extern "C" __global__ void matmul_4d(const float* A, const float* B, float* C, int b, int i, int j, int l, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  const long long rows = static_cast<long long>(b) * i * j;
  if (row >= rows || col >= k) return;
  float acc = 0.0f;
  for (int t = 0; t < l; ++t) acc += A[row * l + t] * B[static_cast<long long>(col) * l + t];
  C[row * k + col] = acc;
}
