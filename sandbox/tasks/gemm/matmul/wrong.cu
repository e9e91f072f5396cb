// Subtly wrong: the tile loop runs K / TILE times, dropping the last partial tile when K % 16 != 0.
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * TILE + tx;
  const int row = blockIdx.y * TILE + ty;
  float acc = 0.0f;
  for (int t = 0; t < K / TILE; ++t) {
    const int ka = t * TILE + tx, kb = t * TILE + ty;
    As[ty][tx] = (row < M && ka < K) ? A[static_cast<long long>(row) * K + ka] : 0.0f;
    Bs[ty][tx] = (kb < K && col < N) ? B[static_cast<long long>(kb) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc;
}
