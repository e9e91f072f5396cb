// Faster: a block of 32 x 8 threads per 32 outputs; the 8 warps split the reduced dimension
// (d = ty, ty + 8, ...) so eight times more loads are in flight per output, and a shared-memory
// pass combines the eight partial results.
// leap-launch: max_dim1 grid=(ceil_div(inner, 32), batch) block=(32, 8)
__device__ __forceinline__ float combine(float a, float b) { return a > b ? a : b; }

extern "C" __global__ void max_dim1(const float* x, float* out, int batch, int dim, int inner) {
  __shared__ float part[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * 32 + tx;
  const int b = blockIdx.y;
  const bool live = i < inner && b < batch && ty < dim;
  float acc = 0.0f;
  if (live) {
    const float* p = x + static_cast<long long>(b) * dim * inner + i;
    acc = p[static_cast<long long>(ty) * inner];
#pragma unroll 4
    for (int d = ty + 8; d < dim; d += 8) {
      const float v = p[static_cast<long long>(d) * inner];
      acc = v > acc ? v : acc;
    }
  }
  part[ty][tx] = acc;
  __syncthreads();
  if (ty == 0 && i < inner && b < batch) {
    float r = part[0][tx];
    const int used = dim < 8 ? dim : 8;
    for (int k = 1; k < used; ++k) r = combine(r, part[k][tx]);
    out[static_cast<long long>(b) * inner + i] = r;
  }
}
