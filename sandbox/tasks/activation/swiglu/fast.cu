// Faster: four outputs per thread with float4 loads and stores when hidden is a multiple of 4, __expf and a
// fast reciprocal. Declares its own launch: a quarter of the threads.
// leap-launch: swiglu grid=(ceil_div(hidden, 1024), tokens) block=(256) args=(x, out, tokens, hidden)
__device__ __forceinline__ float silu(float g) { return g * __frcp_rn(1.0f + __expf(-g)); }

extern "C" __global__ void swiglu(const float* x, float* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  if (t >= tokens) return;
  const float* row = x + static_cast<long long>(t) * 2 * hidden;
  float* o = out + static_cast<long long>(t) * hidden;
  const int j = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (hidden % 4 == 0) {
    if (j >= hidden) return;
    const float4 g = *reinterpret_cast<const float4*>(row + j);
    const float4 u = *reinterpret_cast<const float4*>(row + hidden + j);
    *reinterpret_cast<float4*>(o + j) = make_float4(silu(g.x) * u.x, silu(g.y) * u.y, silu(g.z) * u.z, silu(g.w) * u.w);
  } else {
    for (int k = j; k < j + 4 && k < hidden; ++k) o[k] = silu(row[k]) * row[hidden + k];
  }
}
