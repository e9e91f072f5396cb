// Faster: each thread keeps its residual values in registers between the two passes (cols up to 8192 via
// float4), so the updated residual is never read back; scalar fallback otherwise.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ float block_total(float s, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  s = warp_sum(s);
  if (lane == 0) scratch[warp] = s;
  __syncthreads();
  return warp_sum(lane < warps ? scratch[lane] : 0.0f);
}

extern "C" __global__ void fused_add_rms_norm(const float* x, float* residual, const float* weight, float* out,
                                              int rows, int cols, float eps) {
  constexpr int kMaxVec = 8;  // float4 chunks per thread kept in registers
  __shared__ float scratch[32];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  if (cols % 4 == 0 && cols <= static_cast<int>(blockDim.x) * 4 * kMaxVec) {
    float4 h[kMaxVec];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxVec; ++k) {
      const int c = (threadIdx.x + k * blockDim.x) * 4;
      if (c < cols) {
        const float4 a = *reinterpret_cast<const float4*>(x + base + c);
        float4 r = *reinterpret_cast<const float4*>(residual + base + c);
        r.x += a.x; r.y += a.y; r.z += a.z; r.w += a.w;
        *reinterpret_cast<float4*>(residual + base + c) = r;
        s += r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w;
        h[k] = r;
      }
    }
    const float inv = rsqrtf(block_total(s, scratch) / cols + eps);
#pragma unroll
    for (int k = 0; k < kMaxVec; ++k) {
      const int c = (threadIdx.x + k * blockDim.x) * 4;
      if (c < cols) {
        const float4 w = *reinterpret_cast<const float4*>(weight + c);
        *reinterpret_cast<float4*>(out + base + c) =
            make_float4(h[k].x * inv * w.x, h[k].y * inv * w.y, h[k].z * inv * w.z, h[k].w * inv * w.w);
      }
    }
    return;
  }
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float h = residual[base + c] + x[base + c];
    residual[base + c] = h;
    s += h * h;
  }
  const float inv = rsqrtf(block_total(s, scratch) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = residual[base + c] * inv * weight[c];
}
