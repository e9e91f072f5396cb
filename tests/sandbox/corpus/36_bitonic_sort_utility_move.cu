// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: bitonic_sort_block
#include <utility>

extern "C" __global__ void bitonic_sort_block(float* data) {
  __shared__ float s[512];
  const int t = threadIdx.x;
  s[t] = data[blockIdx.x * 512 + t];
  __syncthreads();
  for (int size = 2; size <= 512; size <<= 1) {
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      const int partner = t ^ stride;
      if (partner > t) {
        const bool up = (t & size) == 0;
        float a = s[t], b = s[partner];
        if ((a > b) == up) {  // std::swap is constexpr only from C++20, so nvcc would refuse it in device code
          float t = std::move(a);
          a = std::move(b);
          b = std::move(t);
        }
        s[t] = a;
        s[partner] = b;
      }
      __syncthreads();
    }
  }
  data[blockIdx.x * 512 + t] = s[t];
}
