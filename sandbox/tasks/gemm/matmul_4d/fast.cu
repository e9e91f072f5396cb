// Faster: 16 x 16 shared-memory tiles over the flattened (b*i*j) x l by l x k product.
#define TILE 16
extern "C" __global__ void matmul_4d(const float* A, const float* B, float* C, int b, int i, int j, int l, int k) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long rows = static_cast<long long>(b) * i * j;
  const long long row = static_cast<long long>(blockIdx.y) * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < l; t0 += TILE) {
    As[ty][tx] = (row < rows && t0 + tx < l) ? A[row * l + t0 + tx] : 0.0f;
    Bs[ty][tx] = (t0 + ty < l && col < k) ? B[static_cast<long long>(t0 + ty) * k + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TILE; ++t) acc += As[ty][t] * Bs[t][tx];
    __syncthreads();
  }
  if (row < rows && col < k) C[row * k + col] = acc;
}
