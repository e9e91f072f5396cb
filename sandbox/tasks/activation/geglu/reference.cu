// Reference: one output per thread, the exact erf gelu of the gate times the up projection.
extern "C" __global__ void geglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || j >= hidden) return;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  const float g = row[j], u = row[hidden + j];
  out[static_cast<long long>(t) * hidden + j] = 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u;
}
