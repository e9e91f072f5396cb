// Faster: one float2 (8-byte) load and store per pair and the frequency from exp2f of a precomputed log2 step.
extern "C" __global__ void rotary_embedding_gptj(const int* positions, const float* x, float* out, int tokens,
                                                 int heads, int half_dim) {
  const int t = blockIdx.y;
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || k >= heads * half_dim) return;
  const int i = k % half_dim;
  const float log2_base = 13.287712379549449f;  // log2(10000)
  const float inv_freq = exp2f(-log2_base * static_cast<float>(i) / static_cast<float>(half_dim));
  const float theta = static_cast<float>(positions[t]) * inv_freq;
  float s, c;
  sincosf(theta, &s, &c);
  const long long at = static_cast<long long>(t) * heads * half_dim + k;
  const float2 v = reinterpret_cast<const float2*>(x)[at];
  reinterpret_cast<float2*>(out)[at] = make_float2(v.x * c - v.y * s, v.y * c + v.x * s);
}
