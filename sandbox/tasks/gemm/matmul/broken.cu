// Does not compile: the shared tiles are declared with a run-time size.
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[blockDim.y][blockDim.x];
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
  As[threadIdx.y][threadIdx.x] = acc;
  C[static_cast<long long>(row) * N + col] = As[threadIdx.y][threadIdx.x];
}
