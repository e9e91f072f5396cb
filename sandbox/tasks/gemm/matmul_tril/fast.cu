// Faster: 16 x 16 shared-memory tiles; tiles wholly outside the triangle are skipped, and elements
// outside either input's triangle are loaded as zero.
#define TILE 16
extern "C" __global__ void matmul_tril(const float* A, const float* B, float* C, int N) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.y * TILE + ty, j = blockIdx.x * TILE + tx;
  const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
  float acc = 0.0f;
  if (j0 <= i0 + TILE - 1) {
    for (int k0 = (j0) / TILE * TILE; k0 <= i0 + TILE - 1 && k0 < N; k0 += TILE) {
      const int ka = k0 + tx, kb = k0 + ty;
      As[ty][tx] = (i < N && ka < N && ka <= i) ? A[static_cast<long long>(i) * N + ka] : 0.0f;
      Bs[ty][tx] = (kb < N && j < N && j <= kb) ? B[static_cast<long long>(kb) * N + j] : 0.0f;
      __syncthreads();
#pragma unroll
      for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
      __syncthreads();
    }
  }
  if (i < N && j < N) C[static_cast<long long>(i) * N + j] = (j <= i) ? acc : 0.0f;
}
