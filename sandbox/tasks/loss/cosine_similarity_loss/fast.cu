// Faster: 16-byte loads when rows are 16-byte aligned, warp shuffles and one barrier per sum.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sums v over the block with shuffles and one barrier; the result is valid in thread 0.
__device__ float block_sum_fast(float v, float* warp_partial) {
  v = warp_sum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_partial[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? warp_partial[threadIdx.x] : 0.0f;
  return warp < 1 ? warp_sum(v) : 0.0f;
}

__device__ __forceinline__ void add_pair(float& dot, float& pp, float& tt, float p, float t) {
  dot += p * t;
  pp += p * p;
  tt += t * t;
}

extern "C" __global__ void cosine_similarity_loss(const float* predictions, const float* targets, float* out, int rows, int dim) {
  __shared__ float warp_d[32], warp_p[32], warp_t[32];
  const long long offset = static_cast<long long>(blockIdx.x) * dim;
  float dot = 0.0f, pp = 0.0f, tt = 0.0f;
  if ((dim & 3) == 0) {
    const float4* p4 = reinterpret_cast<const float4*>(predictions + offset);
    const float4* t4 = reinterpret_cast<const float4*>(targets + offset);
    for (int c = threadIdx.x; c < dim / 4; c += blockDim.x) {
      const float4 p = p4[c], t = t4[c];
      add_pair(dot, pp, tt, p.x, t.x);
      add_pair(dot, pp, tt, p.y, t.y);
      add_pair(dot, pp, tt, p.z, t.z);
      add_pair(dot, pp, tt, p.w, t.w);
    }
  } else {
    for (int c = threadIdx.x; c < dim; c += blockDim.x) add_pair(dot, pp, tt, predictions[offset + c], targets[offset + c]);
  }
  dot = block_sum_fast(dot, warp_d);
  pp = block_sum_fast(pp, warp_p);
  tt = block_sum_fast(tt, warp_t);
  if (threadIdx.x == 0) {
    const float cosine = dot / (fmaxf(sqrtf(pp), 1e-8f) * fmaxf(sqrtf(tt), 1e-8f));
    atomicAdd(out, (1.0f - cosine) / static_cast<float>(rows));
  }
}
