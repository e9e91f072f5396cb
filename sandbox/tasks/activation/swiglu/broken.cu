// Does not compile: a missing closing parenthesis in the silu expression.
extern "C" __global__ void swiglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || j >= hidden) return;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  out[static_cast<long long>(t) * hidden + j] = row[j] / (1.0f + expf(-row[j]) * row[hidden + j];
}
