// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: count_positive
#include <cuda/atomic>

extern "C" __global__ void count_positive(const float* x, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.f) {
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*count);
    c.fetch_add(1, cuda::std::memory_order_relaxed);
  }
}
