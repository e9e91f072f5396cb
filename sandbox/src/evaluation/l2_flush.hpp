// SPDX-License-Identifier: Apache-2.0
// How the real driver empties the L2 between timed runs. A memset of twice the L2 evicts whatever
// the last run left, but leaves the L2 full of dirty lines: the next timed kernel pays for writing
// them back, which pulls every speedup of a memory-bound kernel toward 1. The clean flush follows
// the memset with a read of the whole scratch buffer (the harness's own tiny kernel), so the lines
// left behind are clean. LEAP_SANDBOX_L2_FLUSH=dirty keeps the memset alone, to measure the
// difference on a GPU (tests/gpu/run.sh runs the timing benchmark both ways). Internal.
#pragma once

#include <cstdlib>
#include <string_view>

namespace leap::sandbox::detail {

enum class L2Flush { clean, dirty };

// LEAP_SANDBOX_L2_FLUSH: "clean" (or unset) or "dirty"; anything else is the default, clean.
inline L2Flush l2_flush_choice() {
  const char* v = std::getenv("LEAP_SANDBOX_L2_FLUSH");
  return v != nullptr && std::string_view(v) == "dirty" ? L2Flush::dirty : L2Flush::clean;
}

// Reads n 16-byte words, grid-stride. The loads feed a value the kernel writes only when it equals
// `never` (which the caller chooses so that it cannot), so the compiler must keep every load, and the
// pass writes nothing.
inline constexpr const char k_l2_reader_code[] = R"(
extern "C" __global__ void leap_read_for_l2(const uint4* buf, unsigned long long n, unsigned int never, unsigned int* sink) {
  unsigned int acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const uint4 v = buf[i];
    acc |= v.x | v.y | v.z | v.w;
  }
  if (acc == never) *sink = acc;
}
)";

}  // namespace leap::sandbox::detail
