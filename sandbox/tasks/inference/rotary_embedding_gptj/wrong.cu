// Subtly wrong: the frequency exponent uses head_dim where the formula has half_dim (i / head_dim, not 2i / head_dim).
extern "C" __global__ void rotary_embedding_gptj(const int* positions, const float* x, float* out, int tokens,
                                                 int heads, int half_dim) {
  const int t = blockIdx.y;
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || k >= heads * half_dim) return;
  const int i = k % half_dim;
  const float inv_freq = powf(10000.0f, -static_cast<float>(i) / static_cast<float>(2 * half_dim));
  const float theta = static_cast<float>(positions[t]) * inv_freq;
  float s, c;
  sincosf(theta, &s, &c);
  const long long at = (static_cast<long long>(t) * heads * half_dim + k) * 2;
  const float a = x[at], b = x[at + 1];
  out[at] = a * c - b * s;
  out[at + 1] = b * c + a * s;
}
