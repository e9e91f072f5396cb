// Wrong: stops the tile loop at the last full tile, dropping K % 16 terms.
#define TILE 16
extern "C" __global__ void matmul_large_k(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];  // As[r][k]
  __shared__ float Bs[TILE][TILE + 1];  // Bs[k][c]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc = 0.0f;
  for (int k0 = 0; k0 + TILE <= K; k0 += TILE) {
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
