// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's barrier and shared memory, each against a hand-computed result under every
// schedule; a missing barrier shows as a difference between schedules; lazy fibers.
#include <numeric>
#include <vector>

#include "cpu_runtime_support.hpp"

namespace leap::cpu_runtime::test {
namespace {

std::vector<int> iota_ints(std::size_t n, int from) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST_CASE("a barrier orders shared-memory writes before the reads after it, under every schedule",
          "[cpu_runtime][barrier]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "reverse_block");
  const std::vector<int> in = iota_ints(3 * 256, 1);
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(in.size(), 0);
    const int* pin = in.data();
    int* pout = out.data();
    run_ok(k, {3}, {256}, 0, s, pin, pout);
    for (int b = 0; b < 3; ++b)
      for (int t = 0; t < 256; ++t) REQUIRE(out[static_cast<std::size_t>(b * 256 + t)] == b * 256 + (255 - t) + 1);
  }
}

TEST_CASE("a missing barrier gives different results under different schedules", "[cpu_runtime][barrier][schedule]") {
  const Kernel& racy = kernel("leap_cpu_test_barrier", "reverse_block_racy");
  const std::vector<int> in = iota_ints(256, 1);
  std::vector<std::vector<int>> outs;
  for (const Schedule& s : {Schedule::in_order(), Schedule::reversed(), Schedule::random(3)}) {
    std::vector<int> out(256, 0);
    const int* pin = in.data();
    int* pout = out.data();
    run_ok(racy, {1}, {256}, 0, s, pin, pout);
    outs.push_back(out);
  }
  CHECK(outs[0] != outs[1]);
  CHECK(outs[0] != outs[2]);
  // In order, thread 0 reads s[255] before thread 255 has written it: the poison (0xFFFFFFFF).
  CHECK(outs[0][0] == -1);
  // Reversed, thread 255 runs first and so reads s[0] unwritten, while thread 0 reads s[255] written.
  CHECK(outs[1][0] == 256);
  CHECK(outs[1][255] == 0x7F7F7F7F);
}

TEST_CASE("a correct tree reduction agrees under every schedule, one missing its loop barrier does not",
          "[cpu_runtime][barrier][schedule]") {
  const std::vector<int> in = iota_ints(4 * 256, 0);
  const int* pin = in.data();
  std::vector<int> expected(4);
  for (int b = 0; b < 4; ++b) expected[static_cast<std::size_t>(b)] = (b * 256) * 256 + 255 * 256 / 2;
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(4, 0);
    int* pout = out.data();
    run_ok(kernel("leap_cpu_test_barrier", "tree_sum"), {4}, {256}, 0, s, pin, pout);
    CHECK(out == expected);
  }
  std::vector<std::vector<int>> racy;
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(4, 0);
    int* pout = out.data();
    run_ok(kernel("leap_cpu_test_barrier", "tree_sum_missing_barrier"), {4}, {256}, 0, s, pin, pout);
    racy.push_back(out);
  }
  bool differs = false;
  for (const auto& r : racy) differs = differs || r != racy[0] || r != expected;
  CHECK(differs);
  CHECK(racy[0] != expected);  // in order: thread 0 adds s[1] before thread 1 has folded s[129] into it
  CHECK(racy[1] == expected);  // reversed happens to be the order the tree needs
}

TEST_CASE("__syncthreads_count, _and and _or count the predicate over the block", "[cpu_runtime][barrier]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "barrier_votes");
  std::vector<int> in(128, 0);
  for (std::size_t i = 0; i < in.size(); i += 3) in[i] = 1;  // 43 of 128
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(3 * 128, -1);
    const int* pin = in.data();
    int* pout = out.data();
    run_ok(k, {1}, {128}, 0, s, pin, pout);
    for (int t = 0; t < 128; ++t) {
      REQUIRE(out[static_cast<std::size_t>(3 * t)] == 43);
      REQUIRE(out[static_cast<std::size_t>(3 * t + 1)] == 0);
      REQUIRE(out[static_cast<std::size_t>(3 * t + 2)] == 1);
    }
  }
  std::vector<int> all_true(128, 5);
  std::vector<int> out(3 * 128, -1);
  const int* pin = all_true.data();
  int* pout = out.data();
  run_ok(k, {1}, {128}, 0, Schedule::reversed(), pin, pout);
  CHECK(out[0] == 128);
  CHECK(out[1] == 1);
  CHECK(out[2] == 1);
}

TEST_CASE("threadIdx, blockIdx, blockDim and gridDim in three dimensions", "[cpu_runtime][barrier]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "indices");
  const Dim3 grid{3, 2, 2}, block{4, 3, 2};
  const unsigned blocks = 12, threads = 24;
  for (const Schedule& s : {Schedule::in_order(), Schedule::random(9)}) {
    std::vector<unsigned> out(blocks * threads, 0);
    unsigned* pout = out.data();
    run_ok(k, grid, block, 0, s, pout);
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < threads; ++t) REQUIRE(out[b * threads + t] == b * 10000 + t);
  }
}

TEST_CASE("static shared memory: a slot per declaration, per template instance, per device function",
          "[cpu_runtime][shared]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "shared_slots");
  const std::vector<int> in = iota_ints(32, 1);
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(64, 0);
    const int* pin = in.data();
    int* pout = out.data();
    run_ok(k, {2}, {32}, 0, s, pin, pout);
    for (int t = 0; t < 32; ++t) {
      const int next = in[static_cast<std::size_t>((t + 1) % 32)];
      REQUIRE(out[static_cast<std::size_t>(t)] == next + 1000 * 2 * next + 1000000 * (next + 32));
    }
  }
}

TEST_CASE("dynamic shared memory: extern __shared__ of the launch's size, every declaration one region",
          "[cpu_runtime][shared]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "dynamic_rotate");
  std::vector<float> in(100);
  std::iota(in.begin(), in.end(), 0.5f);
  for (const Schedule& s : all_schedules()) {
    std::vector<float> out(100, -1.0f);
    const float* pin = in.data();
    float* pout = out.data();
    const int n = 100;
    run_ok(k, {1}, {100}, 100 * sizeof(float), s, pin, pout, n);
    for (int t = 0; t < 100; ++t)
      REQUIRE(out[static_cast<std::size_t>(t)] == in[static_cast<std::size_t>((t + 1) % 100)]);
  }
}

TEST_CASE("shared memory nobody wrote holds a byte that depends on the schedule", "[cpu_runtime][shared][schedule]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "read_uninitialised");
  std::vector<unsigned> in_order(4), reversed(4);
  unsigned* p = in_order.data();
  run_ok(k, {1}, {4}, 0, Schedule::in_order(), p);
  p = reversed.data();
  run_ok(k, {1}, {4}, 0, Schedule::reversed(), p);
  CHECK(in_order[0] == 0xFFFFFFFFu);
  CHECK(reversed[0] == 0x7F7F7F7Fu);
}

TEST_CASE("lazy fibers: a block whose threads never wait runs its threads one after another on one stack",
          "[cpu_runtime][schedule]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "no_wait");
  std::vector<int> out(4 * 1024, -1);
  int* p = out.data();
  const LaunchResult r = run(k, {4}, {1024}, 0, Schedule::in_order(), LaunchOptions{}, p);
  REQUIRE(r.ok());
  CHECK(r.stats.blocks == 4);
  CHECK(r.stats.stacks == 1);
  CHECK(r.stats.switches == 2 * 4);  // into each block's runner and back, nothing in between
  for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == static_cast<int>(i % 1024));
  // With a barrier, every thread must keep its stack until all have arrived.
  const std::vector<int> in = iota_ints(256, 0);
  std::vector<int> sums(1, 0);
  const int* pin = in.data();
  int* psums = sums.data();
  const LaunchResult tree = run(kernel("leap_cpu_test_barrier", "tree_sum"), {1}, {256}, 0, Schedule::in_order(),
                                LaunchOptions{}, pin, psums);
  REQUIRE(tree.ok());
  CHECK(tree.stats.stacks == 256);
}

TEST_CASE("blocks on several workers give the same results as on one", "[cpu_runtime][schedule]") {
  const std::vector<int> in = iota_ints(16 * 256, 3);
  const int* pin = in.data();
  std::vector<int> one(16), four(16);
  int* p = one.data();
  run_ok(kernel("leap_cpu_test_barrier", "tree_sum"), {16}, {256}, 0, Schedule::random(5), pin, p);
  LaunchOptions options;
  options.workers = 4;
  p = four.data();
  const LaunchResult r =
      run(kernel("leap_cpu_test_barrier", "tree_sum"), {16}, {256}, 0, Schedule::random(5), options, pin, p);
  REQUIRE(r.ok());
  CHECK(one == four);
}

}  // namespace
}  // namespace leap::cpu_runtime::test
