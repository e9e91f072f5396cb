// Faster: the output channel's row of weights is staged in shared memory 256 channels at a time and
// the channel loop is unrolled by four (reads stay coalesced along the pixels).
extern "C" __global__ void conv2d_pointwise(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, float* __restrict__ y, int N, int C, int H, int W, int F) {
  __shared__ float ws[256];
  const int HW = H * W;
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  const int f = blockIdx.y, n = blockIdx.z;
  const bool active = p < HW;
  const float* xn = x + static_cast<long long>(n) * C * HW + (active ? p : 0);
  float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
  for (int c0 = 0; c0 < C; c0 += 256) {
    const int cc = min(256, C - c0);
    __syncthreads();
    if (threadIdx.x < cc) ws[threadIdx.x] = w[static_cast<long long>(f) * C + c0 + threadIdx.x];
    __syncthreads();
    if (!active) continue;
    int c = 0;
    for (; c + 4 <= cc; c += 4) {
      acc0 += xn[static_cast<long long>(c0 + c) * HW] * ws[c];
      acc1 += xn[static_cast<long long>(c0 + c + 1) * HW] * ws[c + 1];
      acc2 += xn[static_cast<long long>(c0 + c + 2) * HW] * ws[c + 2];
      acc3 += xn[static_cast<long long>(c0 + c + 3) * HW] * ws[c + 3];
    }
    for (; c < cc; ++c) acc0 += xn[static_cast<long long>(c0 + c) * HW] * ws[c];
  }
  if (active) y[(static_cast<long long>(n) * F + f) * HW + p] = bias[f] + ((acc0 + acc1) + (acc2 + acc3));
}
