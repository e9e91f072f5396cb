// Subtly wrong: the halves are swapped, silu(up) * gate (the other common packing of the fused projection).
extern "C" __global__ void swiglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || j >= hidden) return;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  const float u = row[j], g = row[hidden + j];
  out[static_cast<long long>(t) * hidden + j] = g / (1.0f + expf(-g)) * u;
}
