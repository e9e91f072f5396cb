// Does not compile: sincosf is given the values, not the addresses, of its outputs.
extern "C" __global__ void rotary_embedding_gptj(const int* positions, const float* x, float* out, int tokens,
                                                 int heads, int half_dim) {
  const int t = blockIdx.y;
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || k >= heads * half_dim) return;
  const float theta = positions[t] * powf(10000.0f, -static_cast<float>(k % half_dim) / half_dim);
  float s, c;
  sincosf(theta, s, c);
  const long long at = (static_cast<long long>(t) * heads * half_dim + k) * 2;
  out[at] = x[at] * c - x[at + 1] * s;
  out[at + 1] = x[at + 1] * c + x[at] * s;
}
