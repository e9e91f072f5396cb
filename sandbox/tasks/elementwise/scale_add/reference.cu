// Reference: each thread handles 4 consecutive elements with scalar loads (strided across the warp).
extern "C" __global__ void scale_add(const float* x, const float* y, float* out, float alpha, int n) {
  const long long base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  for (int k = 0; k < 4; ++k) {
    const long long i = base + k;
    if (i < n) out[i] = alpha * x[i] + y[i];
  }
}
