// SPDX-License-Identifier: Apache-2.0
// expect-status: refused
// expect-log: 3 problems
// expect-log: kernel.cu(7): #include <iostream>: host-only standard header
// expect-log: kernel.cu(8): #include <vector>: host-only standard header
// expect-log: kernel.cu(9): #include "helper_cuda.h": not in the toolkit: inline it or ship it as a header
#include <iostream>
#include <vector>
#include "helper_cuda.h"

__global__ void inc(int* x) { x[threadIdx.x] += 1; }

int main() {
  std::vector<int> h(32, 0);
  std::cout << h[0] << std::endl;
  return 0;
}
