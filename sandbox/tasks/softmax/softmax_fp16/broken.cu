// Does not compile: a float2 is passed where a float is expected.
// leap-launch: softmax_fp16 grid=rows block=512
#include <cuda_fp16.h>

__device__ __forceinline__ void add_value(float& m, float& s, float v) {
  if (v > m) {
    s = s * expf(m - v) + 1.0f;
    m = v;
  } else {
    s += expf(v - m);
  }
}

__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  s = (m == nm ? s : s * expf(m - nm)) + (om == nm ? os : os * expf(om - nm));
  m = nm;
}

extern "C" __global__ void softmax_fp16(const __half* x, __half* out, int rows, int cols) {
  __shared__ float warp_max[32], warp_sum[32];
  __shared__ float row_max, row_inv;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = x + static_cast<long long>(row) * cols;
  __half* q = out + static_cast<long long>(row) * cols;
  const bool pairs = (cols & 1) == 0;
  float m = -__int_as_float(0x7f800000), s = 0.0f;
  if (pairs) {
    for (int c = threadIdx.x; c < cols / 2; c += blockDim.x) {
      const float2 v = __half22float2(reinterpret_cast<const __half2*>(p)[c]);
      add_value(m, s, v);
      add_value(m, s, v.x);
      add_value(m, s, v.y);
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) add_value(m, s, __half2float(p[c]));
  }
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (lane == 0) {
    warp_max[warp] = m;
    warp_sum[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < warps ? warp_max[lane] : -__int_as_float(0x7f800000);
    s = lane < warps ? warp_sum[lane] : 0.0f;
    for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) {
      row_max = m;
      row_inv = 1.0f / s;
    }
  }
  __syncthreads();
  const float mx = row_max, inv = row_inv;
  if (pairs) {
    for (int c = threadIdx.x; c < cols / 2; c += blockDim.x) {
      const float2 v = __half22float2(reinterpret_cast<const __half2*>(p)[c]);
      reinterpret_cast<__half2*>(q)[c] = __floats2half2_rn(expf(v.x - mx) * inv, expf(v.y - mx) * inv);
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = __float2half(expf(__half2float(p[c]) - mx) * inv);
  }
}
