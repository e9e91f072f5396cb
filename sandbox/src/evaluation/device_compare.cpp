// SPDX-License-Identifier: Apache-2.0
#include "evaluation/device_compare.hpp"

#include <algorithm>

namespace leap::sandbox::detail {

void compare_on_host(const void* actual, const void* expected, DType dtype, std::size_t n, Tolerance tol, bool exact,
                     CompareRecord& record) {
  for (std::size_t i = 0; i < n; ++i) {
    if (leap_cmp_differs(actual, expected, static_cast<int>(dtype), exact ? 1 : 0, tol.atol, tol.rtol, i) == 0)
      continue;
    ++record.mismatches;
    record.first_index = std::min<std::uint64_t>(record.first_index, i);
  }
}

std::string output_compare_source() {
  return std::string(
             "#define LEAP_CMP_HD static __device__ __forceinline__\n"
             "#define LEAP_CMP_FLOAT(bits) __uint_as_float(bits)\n"
             "#define LEAP_CMP_FABS(x) fabs(x)\n"
             "#define LEAP_CMP_DADD(x, y) __dadd_rn((x), (y))\n"
             "#define LEAP_CMP_DMUL(x, y) __dmul_rn((x), (y))\n"
             "#define LEAP_CMP_INF __longlong_as_double(0x7FF0000000000000LL)\n") +
         k_output_compare_code +
         "\nextern \"C\" __global__ void leap_compare_outputs(const void* actual, const void* expected, unsigned long "
         "long n,\n"
         "    int dtype, int exact, double atol, double rtol, unsigned long long* record) {\n"
         "  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
         "  unsigned long long count = 0, first = ~0ULL;\n"
         "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) "
         "{\n"
         "    if (leap_cmp_differs(actual, expected, dtype, exact, atol, rtol, i)) { ++count; if (i < first) first = "
         "i; }\n"
         "  }\n"
         "  if (count != 0) { atomicAdd(&record[0], count); atomicMin(&record[1], first); }\n"
         "}\n";
}

}  // namespace leap::sandbox::detail
