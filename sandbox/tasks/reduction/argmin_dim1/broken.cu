// Does not compile: a float row of shared memory is bound to an int pointer.
// leap-launch: argmin_dim1 grid=(ceil_div(inner, 32), batch) block=(32, 8)
extern "C" __global__ void argmin_dim1(const float* x, int* out, int batch, int dim, int inner) {
  __shared__ float part_value[8][32];
  __shared__ int part_index[8][32];
  const int* first = part_value[0];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * 32 + tx;
  const int b = blockIdx.y;
  float best = 0.0f;
  int best_d = -1;
  if (i < inner && b < batch && ty < dim) {
    const float* p = x + static_cast<long long>(b) * dim * inner + i;
    best = p[static_cast<long long>(ty) * inner];
    best_d = ty;
#pragma unroll 4
    for (int d = ty + 8; d < dim; d += 8) {
      const float v = p[static_cast<long long>(d) * inner];
      if (v < best) {
        best = v;
        best_d = d;
      }
    }
  }
  part_value[ty][tx] = best;
  part_index[ty][tx] = best_d;
  __syncthreads();
  if (ty == 0 && i < inner && b < batch) {
    float v = part_value[0][tx];
    int d = part_index[0][tx];
    for (int k = 1; k < 8; ++k) {
      const int dk = part_index[k][tx];
      if (dk < 0) continue;
      const float vk = part_value[k][tx];
      if (vk < v || (vk == v && dk < d)) {
        v = vk;
        d = dk;
      }
    }
    out[static_cast<long long>(b) * inner + i] = d;
  }
}
