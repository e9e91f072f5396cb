// Subtly wrong: the tile is staged but read back untransposed.
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  int c = blockIdx.x * 32 + threadIdx.x;
  for (int j = 0; j < 32; j += 8) {
    const int r = blockIdx.y * 32 + threadIdx.y + j;
    if (r < rows && c < cols) tile[threadIdx.y + j][threadIdx.x] = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  const int r = blockIdx.y * 32 + threadIdx.x;
  for (int j = 0; j < 32; j += 8) {
    c = blockIdx.x * 32 + threadIdx.y + j;
    if (c < cols && r < rows) out[static_cast<long long>(c) * rows + r] = tile[threadIdx.y + j][threadIdx.x];
  }
}
