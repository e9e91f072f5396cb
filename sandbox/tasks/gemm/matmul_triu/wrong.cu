// Wrong: treats the inputs as full matrices (k over all of 0..N-1), forgetting they are upper triangular.
extern "C" __global__ void matmul_triu(const float* A, const float* B, float* C, int N) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= N || j >= N) return;
  float acc = 0.0f;
  if (i <= j) {
    for (int k = 0; k < N; ++k) acc += A[static_cast<long long>(i) * N + k] * B[static_cast<long long>(k) * N + j];
  }
  C[static_cast<long long>(i) * N + j] = acc;
}
