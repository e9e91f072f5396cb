// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's atomics on int, unsigned, 64-bit, float and double: 1024 threads in 8 blocks, on
// one worker and on four (blocks on several OS threads at once), each total computed by hand.
#include <climits>
#include <vector>

#include "cpu_runtime_support.hpp"

namespace leap::cpu_runtime::test {
namespace {

TEST_CASE("atomics give the totals of every thread's update, on one worker and on four", "[cpu_runtime][atomics]") {
  const Kernel& k = kernel("leap_cpu_test_atomics", "atomics");
  for (unsigned workers : {1u, 4u}) {
    for (const Schedule& s : all_schedules()) {
      std::vector<int> i{0, 0, INT_MIN, INT_MAX, 0, 0, -1};
      std::vector<unsigned> u(7, 0);
      std::vector<unsigned long long> ull(3, 0);
      std::vector<float> f(2, 0.0f);
      std::vector<double> d(1, 0.0);
      std::vector<long long> ll(1, 0);
      int* pi = i.data();
      unsigned* pu = u.data();
      unsigned long long* pull = ull.data();
      float* pf = f.data();
      double* pd = d.data();
      long long* pll = ll.data();
      LaunchOptions options;
      options.workers = workers;
      const LaunchResult r = run(k, {8}, {128}, 0, s, options, pi, pu, pull, pf, pd, pll);
      INFO(s.name() << " on " << workers << " workers: " << r.message);
      REQUIRE(r.ok());
      CHECK(i[0] == 1024);
      CHECK(i[1] == -2048);
      CHECK(i[2] == 1023);
      CHECK(i[3] == -1023);
      CHECK(i[4] == 0x7FFFFFFF);
      CHECK(i[5] == 0);  // 0 ^ 1 ^ ... ^ 1023
      CHECK(i[6] == INT_MIN);
      CHECK(u[0] == 1023u * 1024u / 2u);
      CHECK(u[1] == 1024u % 10u);                // atomicInc wraps to 0 after 9: a cycle of 10
      CHECK(u[2] == (10u - 1024u % 10u) % 10u);  // atomicDec goes 9, 8, ..., 0, 9
      CHECK(u[3] == 3u * 1023u);
      CHECK(u[4] >= 1u);
      CHECK(u[4] <= 1024u);
      CHECK(u[5] == 1u);  // one compare-and-swap won
      CHECK(u[6] == 7u);
      CHECK(ull[0] == 1024ull << 33);
      CHECK(ull[1] == 1023ull << 40);
      CHECK(ull[2] == 5ull);
      CHECK(f[0] == 512.0f);
      CHECK(f[1] == 2.5f);
      CHECK(d[0] == 256.0);
      CHECK(ll[0] == -1023LL * 1000000000000LL);
    }
  }
}

}  // namespace
}  // namespace leap::cpu_runtime::test
