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

__device__ __forceinline__ void add_diff(float& sp, float& sn, float a, float p, float n) {
  const float dp = a - p + 1e-6f, dn = a - n + 1e-6f;
  sp += dp * dp;
  sn += dn * dn;
}

extern "C" __global__ void triplet_margin_loss(const float* anchor, const float* positive, const float* negative, float* out, int rows, int dim, float margin) {
  __shared__ float warp_p[32], warp_n[32];
  const long long offset = static_cast<long long>(blockIdx.x) * dim;
  float sp = 0.0f, sn = 0.0f;
  if ((dim & 3) == 0) {
    const float4* a4 = reinterpret_cast<const float4*>(anchor + offset);
    const float4* p4 = reinterpret_cast<const float4*>(positive + offset);
    const float4* n4 = reinterpret_cast<const float4*>(negative + offset);
    for (int c = threadIdx.x; c < dim / 4; c += blockDim.x) {
      const float4 a = a4[c], p = p4[c], n = n4[c];
      add_diff(sp, sn, a.x, p.x, n.x);
      add_diff(sp, sn, a.y, p.y, n.y);
      add_diff(sp, sn, a.z, p.z, n.z);
      add_diff(sp, sn, a.w, p.w, n.w);
    }
  } else {
    for (int c = threadIdx.x; c < dim; c += blockDim.x) add_diff(sp, sn, anchor[offset + c], positive[offset + c], negative[offset + c]);
  }
  sp = block_sum_fast(sp, warp_p);
  sn = block_sum_fast(sn, warp_n);
  if (threadIdx.x == 0) atomicAdd(out, fmaxf(sqrtf(sp) - sqrtf(sn) + margin, 0.0f) / static_cast<float>(rows));
}
