// Subtly wrong: the tanh approximation of gelu where the task asks for the exact erf form (off by up to ~1e-3).
extern "C" __global__ void geglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || j >= hidden) return;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  const float g = row[j], u = row[hidden + j];
  const float gelu = 0.5f * g * (1.0f + tanhf(0.7978845608f * (g + 0.044715f * g * g * g)));
  out[static_cast<long long>(t) * hidden + j] = gelu * u;
}
