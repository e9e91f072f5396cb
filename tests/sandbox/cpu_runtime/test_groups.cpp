// SPDX-License-Identifier: Apache-2.0
// The basic cooperative groups: this_thread_block, tiled_partition (static and at run time), the
// tile's shuffles, ballot, reduce and scan, each against a hand-computed result.
#include <algorithm>
#include <vector>

#include "cpu_runtime_support.hpp"

namespace leap::cpu_runtime::test {
namespace {

TEST_CASE("cooperative groups: block, tiles of 16 and 8, reduce, scan, shuffle, ballot", "[cpu_runtime][groups]") {
  const Kernel& k = kernel("leap_cpu_test_groups", "groups");
  std::vector<int> in(64);
  for (int t = 0; t < 64; ++t) in[static_cast<std::size_t>(t)] = (t * 7) % 23;
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(9 * 64, -1);
    const int* pin = in.data();
    int* po = out.data();
    run_ok(k, {1}, {64}, 0, s, pin, po);
    for (int t = 0; t < 64; ++t) {
      const int tile = t / 16, rank = t % 16;
      const auto first = in.begin() + tile * 16;
      int sum = 0, scan = 0, largest = first[0];
      for (int r = 0; r < 16; ++r) {
        sum += first[r];
        if (r <= rank) scan += first[r];
        largest = std::max(largest, first[r]);
      }
      const int* o = &out[static_cast<std::size_t>(9 * t)];
      INFO("thread " << t << " under " << s.name());
      CHECK(o[0] == sum);
      CHECK(o[1] == rank);
      CHECK(o[2] == tile);
      CHECK(o[3] == first[3]);
      CHECK(o[4] == 0xAAAA);
      CHECK(o[5] == t + 1000 * 64);
      CHECK(o[6] == 800 + t % 8);
      CHECK(o[7] == scan);
      CHECK(o[8] == largest);
    }
  }
}

}  // namespace
}  // namespace leap::cpu_runtime::test
