// Wrong: scales by the column's entry of d (B @ diag(d)) instead of the row's; in bounds only because the index wraps.
extern "C" __global__ void matmul_diag(const float* d, const float* B, float* C, int N, int M) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y;
  if (j >= M) return;
  C[static_cast<long long>(i) * M + j] = d[j % N] * B[static_cast<long long>(i) * M + j];
}
