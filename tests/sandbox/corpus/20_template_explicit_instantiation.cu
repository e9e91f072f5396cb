// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: _Z9scale_allIfLi4EEvPT_S0_i _Z9scale_allIdLi2EEvPT_S0_i
// Templated kernels with explicit instantiations, as a library compiled without its launcher ships them.
template <typename T, int VEC>
__global__ void scale_all(T* x, T a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
  for (int v = 0; v < VEC; ++v)
    if (i + v < n) x[i + v] *= a;
}
template __global__ void scale_all<float, 4>(float*, float, int);
template __global__ void scale_all<double, 2>(double*, double, int);
