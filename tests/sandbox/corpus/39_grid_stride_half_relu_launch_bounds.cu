// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: relu_half
#include <cuda_fp16.h>
#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256, 4) relu_half(__half* x, long long n) {
  const __half zero = __float2half(0.f);
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) x[i] = __hmax(x[i], zero);
}
