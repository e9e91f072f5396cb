// Reference: one output per thread, silu(g) * u in float.
extern "C" __global__ void swiglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || j >= hidden) return;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  const float g = row[j], u = row[hidden + j];
  out[static_cast<long long>(t) * hidden + j] = g / (1.0f + expf(-g)) * u;
}
