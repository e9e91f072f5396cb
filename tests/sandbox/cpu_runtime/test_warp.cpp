// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's 32-lane warps: shuffles with widths, 64-bit and half shuffles, votes, matches,
// reductions, partial masks, exited lanes, and the misuses that are errors, each against a
// hand-computed result under every schedule.
#include <vector>

#include "cpu_runtime_support.hpp"

namespace leap::cpu_runtime::test {
namespace {

TEST_CASE("shuffles move values between lanes as CUDA defines them, widths included", "[cpu_runtime][warp]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "shuffles");
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(8 * 64, -1);
    int* p = out.data();
    run_ok(k, {1}, {64}, 0, s, p);
    for (int t = 0; t < 64; ++t) {
      const int l = t % 32, w = t / 32;
      auto v = [&](int lane) { return 100 + 32 * w + lane; };
      const int* o = &out[static_cast<std::size_t>(8 * t)];
      INFO("thread " << t << " under " << s.name());
      CHECK(o[0] == v(3));
      CHECK(o[1] == v((l & ~7) + ((l + 5) & 7)));
      CHECK(o[2] == (l >= 2 ? v(l - 2) : v(l)));
      CHECK(o[3] == ((l & 15) + 4 < 16 ? v(l + 4) : v(l)));
      CHECK(o[4] == v(l ^ 1));
      CHECK(o[5] == (l < 16 ? v(l) : v(l ^ 20)));
      CHECK(o[6] == 1);
      CHECK(o[7] == (l < 31 ? l + 1 : l));
    }
  }
}

TEST_CASE("ballot, any, all, match and the warp reductions", "[cpu_runtime][warp]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "votes");
  unsigned every_third = 0;
  for (unsigned l = 0; l < 32; l += 3) every_third |= 1u << l;
  for (const Schedule& s : all_schedules()) {
    std::vector<unsigned> out(8 * 64, 7);
    unsigned* p = out.data();
    run_ok(k, {1}, {64}, 0, s, p);
    for (unsigned t = 0; t < 64; ++t) {
      const unsigned l = t % 32;
      const unsigned* o = &out[8 * t];
      INFO("thread " << t << " under " << s.name());
      CHECK(o[0] == every_third);
      CHECK(o[1] == 1u);
      CHECK(o[2] == 0u);
      CHECK(o[3] == 1u);
      CHECK(o[4] == 0xFFu << (8 * (l / 8)));
      CHECK(o[5] == 0xFFFFFFFFu);
      CHECK(o[6] == 1u);
      CHECK(o[7] == 496u + (15u << 16));  // the sum of 0..31, and the largest of lane - 16
    }
  }
}

TEST_CASE("two half warps with masks of their own exchange and __syncwarp apart", "[cpu_runtime][warp]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "half_warps");
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(64, -1);
    int* p = out.data();
    run_ok(k, {1}, {64}, 0, s, p);
    for (int t = 0; t < 64; ++t) REQUIRE(out[static_cast<std::size_t>(t)] == (t % 32 < 16 ? 120 : 376));
  }
}

TEST_CASE("lanes that exited take no part in a collective, and __activemask leaves them out", "[cpu_runtime][warp]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "after_exit");
  for (const Schedule& s : all_schedules()) {
    std::vector<unsigned> out(2 * 64, 7);
    unsigned* p = out.data();
    run_ok(k, {1}, {64}, 0, s, p);
    for (unsigned t = 0; t < 64; ++t) {
      if (t % 32 >= 16) continue;
      REQUIRE(out[2 * t] == 0xFFFFu);
      REQUIRE(out[2 * t + 1] == 0xFFFFu);
    }
  }
}

TEST_CASE("__activemask gives the lanes that reach its call site together", "[cpu_runtime][warp]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "active_in_branches");
  for (const Schedule& s : all_schedules()) {
    std::vector<unsigned> out(64, 7);
    unsigned* p = out.data();
    run_ok(k, {1}, {64}, 0, s, p);
    for (unsigned t = 0; t < 64; ++t) REQUIRE(out[t] == (t % 32 < 10 ? 0x3FFu : ~0x3FFu));
  }
}

TEST_CASE("a warp-shuffle reduction as the tasks write it sums every block", "[cpu_runtime][warp]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "warp_reduce");
  std::vector<float> in(3 * 256);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97);
  for (const Schedule& s : all_schedules()) {
    std::vector<float> out(3, -1.0f);
    const float* pin = in.data();
    float* p = out.data();
    run_ok(k, {3}, {256}, 0, s, pin, p);
    for (std::size_t b = 0; b < 3; ++b) {
      float expected = 0;
      for (std::size_t i = 0; i < 256; ++i) expected += in[b * 256 + i];
      REQUIRE(out[b] == expected);
    }
  }
}

TEST_CASE("a shuffle that reads a lane that exited is an invalid shuffle, named with the lane and line",
          "[cpu_runtime][warp][failure]") {
  const Kernel& k = kernel("leap_cpu_test_warp", "read_exited_lane");
  std::vector<int> out(32, 0);
  int* p = out.data();
  const LaunchResult r = run(k, {1}, {32}, 0, Schedule::in_order(), LaunchOptions{}, p);
  CHECK(r.failure == Failure::invalid_shuffle);
  CHECK_THAT(r.message, Catch::Contains("reads lane 16") && Catch::Contains("has exited") &&
                            Catch::Contains("warp.cu:") && Catch::Contains("__shfl_down_sync"));
}

TEST_CASE("lanes of one mask at different collectives, or a mask without the caller, are a warp mismatch",
          "[cpu_runtime][warp][failure]") {
  std::vector<int> out(32, 0);
  int* p = out.data();
  const LaunchResult r =
      run(kernel("leap_cpu_test_warp", "mismatch"), {1}, {32}, 0, Schedule::random(1), LaunchOptions{}, p);
  CHECK(r.failure == Failure::warp_mismatch);
  CHECK_THAT(r.message, Catch::Contains("__shfl_sync") && Catch::Contains("__ballot_sync"));
  const LaunchResult foreign =
      run(kernel("leap_cpu_test_warp", "foreign_mask"), {1}, {32}, 0, Schedule::in_order(), LaunchOptions{}, p);
  CHECK(foreign.failure == Failure::warp_mismatch);
  CHECK_THAT(foreign.message, Catch::Contains("does not name its own lane"));
}

}  // namespace
}  // namespace leap::cpu_runtime::test
