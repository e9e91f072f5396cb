// Faster: the output channel's 27 weights per input channel are staged in shared memory 8 channels at
// a time, the window is unrolled and each plane's and row's bounds are tested once.
#define CCHUNK 8
extern "C" __global__ void conv3d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, float* __restrict__ y, int N, int C, int D, int H, int W, int F) {
  __shared__ float ws[CCHUNK * 27];
  const long long plane = static_cast<long long>(H) * W;
  const long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int f = blockIdx.y, n = blockIdx.z;
  const bool active = p < D * plane;
  const int od = active ? static_cast<int>(p / plane) : 0;
  const int oh = active ? static_cast<int>(p / W % H) : 0, ow = active ? static_cast<int>(p % W) : 0;
  float acc = active ? bias[f] : 0.0f;
  for (int c0 = 0; c0 < C; c0 += CCHUNK) {
    const int cc = min(CCHUNK, C - c0);
    __syncthreads();
    for (int t = threadIdx.x; t < cc * 27; t += blockDim.x) ws[t] = w[(static_cast<long long>(f) * C + c0) * 27 + t];
    __syncthreads();
    if (!active) continue;
    for (int c = 0; c < cc; ++c) {
      const float* xc = x + (static_cast<long long>(n) * C + c0 + c) * D * plane;
#pragma unroll
      for (int kd = 0; kd < 3; ++kd) {
        const int id = od - 1 + kd;
        if (id < 0 || id >= D) continue;
#pragma unroll
        for (int kh = 0; kh < 3; ++kh) {
          const int ih = oh - 1 + kh;
          if (ih < 0 || ih >= H) continue;
          const float* xr = xc + id * plane + static_cast<long long>(ih) * W;
#pragma unroll
          for (int kw = 0; kw < 3; ++kw) {
            const int iw = ow - 1 + kw;
            if (iw >= 0 && iw < W) acc += xr[iw] * ws[c * 27 + (kd * 3 + kh) * 3 + kw];
          }
        }
      }
    }
  }
  if (active) y[(static_cast<long long>(n) * F + f) * D * plane + p] = acc;
}
