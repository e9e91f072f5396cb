// Wrong: forgets B's batch offset: every batch multiplies by B[0].
#define TILE 16
extern "C" __global__ void bmm(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];  // As[r][k]
  __shared__ float Bs[TILE][TILE + 1];  // Bs[k][c]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const long long b = blockIdx.z;
  A += b * M * K;
  C += b * M * N;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    { const int r = row0 + ty, k = k0 + tx; As[ty][tx] = (r < M && k < K) ? A[static_cast<long long>(r) * K + k] : 0.0f; }
    { const int k = k0 + ty, c = col0 + tx; Bs[ty][tx] = (k < K && c < N) ? B[static_cast<long long>(k) * N + c] : 0.0f; }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  const int row = row0 + ty, col = col0 + tx;
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc;
}
