// Faster: a block of 32 x 8 threads per 32 columns; the 8 warps split dimension 1 and each makes one
// read pass with a running maximum and a rescaled running sum (the online softmax); shared memory
// merges the 8 pairs, and the output pass multiplies by the reciprocal of the sum.
// leap-launch: softmax_dim1 grid=(ceil_div(inner, 32), batch) block=(32, 8)
extern "C" __global__ void softmax_dim1(const float* x, float* out, int batch, int dim, int inner) {
  __shared__ float part_max[8][32], part_sum[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * 32 + tx;
  const int b = blockIdx.y;
  const bool live = i < inner && b < batch;
  const long long start = static_cast<long long>(b) * dim * inner + i;
  float m = -__int_as_float(0x7f800000), s = 0.0f;
  if (live)
    for (int d = ty; d < dim; d += 8) {
      const float v = x[start + static_cast<long long>(d) * inner];
      if (v > m) {
        s = s * expf(m - v) + 1.0f;
        m = v;
      } else {
        s += expf(v - m);
      }
    }
  part_max[ty][tx] = m;
  part_sum[ty][tx] = s;
  __syncthreads();
  float gm = part_max[0][tx];
  for (int k = 1; k < 8; ++k) gm = fmaxf(gm, part_max[k][tx]);
  float gs = 0.0f;
  for (int k = 0; k < 8; ++k)
    if (part_sum[k][tx] > 0.0f) gs += part_sum[k][tx] * expf(part_max[k][tx] - gm);
  const float inv = 1.0f / gs;
  if (live)
    for (int d = ty; d < dim; d += 8) {
      const long long at = start + static_cast<long long>(d) * inner;
      out[at] = expf(x[at] - gm) * inv;
    }
}
