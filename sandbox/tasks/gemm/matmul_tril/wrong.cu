// Wrong: the k loop stops before the diagonal term (k < i instead of k <= i).
extern "C" __global__ void matmul_tril(const float* A, const float* B, float* C, int N) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= N || j >= N) return;
  float acc = 0.0f;
  if (j <= i) {
    for (int k = j; k < i; ++k) acc += A[static_cast<long long>(i) * N + k] * B[static_cast<long long>(k) * N + j];
  }
  C[static_cast<long long>(i) * N + j] = acc;
}
