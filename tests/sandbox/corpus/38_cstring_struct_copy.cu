// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: gather_records
#include <cstring>
#include <cstddef>

struct Record { float value; int key; short tag; };

extern "C" __global__ void gather_records(const unsigned char* raw, const int* index, Record* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Record r;
  std::memcpy(&r, raw + static_cast<std::size_t>(index[i]) * sizeof(Record), sizeof(Record));
  out[i] = r;
}
