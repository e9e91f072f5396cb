// Reference: one output per thread, its dot product read straight from global memory.
extern "C" __global__ void bmm(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const long long b = blockIdx.z;
  A += b * M * K;
  B += b * K * N;
  C += b * M * N;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
  C[static_cast<long long>(row) * N + col] = acc;
}
