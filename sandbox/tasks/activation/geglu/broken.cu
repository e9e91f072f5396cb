// Does not compile: the kernel is declared to return the value it computes.
extern "C" __global__ float geglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  const float g = row[j], u = row[hidden + j];
  out[static_cast<long long>(t) * hidden + j] = 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u;
  return out[static_cast<long long>(t) * hidden + j];
}
