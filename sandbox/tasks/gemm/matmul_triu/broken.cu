// Does not compile: the size parameter is declared with a type that does not exist.
extern "C" __global__ void matmul_triu(const float* A, const float* B, float* C, index_t N) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= N || j >= N) return;
  float acc = 0.0f;
  if (i <= j) {
    for (int k = i; k <= j; ++k) acc += A[static_cast<long long>(i) * N + k] * B[static_cast<long long>(k) * N + j];
  }
  C[static_cast<long long>(i) * N + j] = acc;
}
