// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: copy_large
// 64-bit indexing for tensors past 2^31 elements, and an alignment test through uintptr_t.
#include <cstdint>

extern "C" __global__ void copy_large(const float* __restrict__ src, float* __restrict__ dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const bool aligned = (reinterpret_cast<uintptr_t>(src) % 16 == 0) && (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = aligned ? __ldg(src + i) : src[i];
  }
}
