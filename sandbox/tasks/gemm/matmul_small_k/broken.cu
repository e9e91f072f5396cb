// Does not compile: a const float pointer is bound to a plain int pointer.
extern "C" __global__ void matmul_small_k(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  int* a_row = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a_row[k] * B[static_cast<long long>(k) * N + col];
  C[static_cast<long long>(row) * N + col] = acc;
}
