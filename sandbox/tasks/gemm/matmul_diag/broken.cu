// Does not compile: the row index is declared twice in one scope.
extern "C" __global__ void matmul_diag(const float* d, const float* B, float* C, int N, int M) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y;
  const int i = blockIdx.y;
  if (j >= M) return;
  C[static_cast<long long>(i) * M + j] = d[i] * B[static_cast<long long>(i) * M + j];
}
