// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: _Z10accumulateIiEvPKT_PS0_i _Z10accumulateIfEvPKT_PS0_i
#include <type_traits>
#include <cstdint>

template <typename T>
__device__ typename std::enable_if<std::is_integral<T>::value, T>::type zero_of() { return T(0); }
template <typename T>
__device__ typename std::enable_if<std::is_floating_point<T>::value, T>::type zero_of() { return T(-0.0); }

template <typename T>
__global__ void accumulate(const T* x, T* out, int n) {
  static_assert(std::is_arithmetic_v<T>, "numbers only");
  T s = zero_of<T>();
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  atomicAdd(out, s);
}
template __global__ void accumulate<int>(const int*, int*, int);
template __global__ void accumulate<float>(const float*, float*, int);
