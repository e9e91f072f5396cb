// SPDX-License-Identifier: Apache-2.0
// What a kernel does wrong is a result that says where: deadlocks, divergent barriers, barriers after
// an exit (when asked), traps and asserts, an access past the dynamic shared memory, a stack overflow,
// a thread that spins past the time limit. Misuse of a launch throws.
#include <chrono>
#include <vector>

#include "cpu_runtime_support.hpp"
#include "sanitizers.hpp"

namespace leap::cpu_runtime::test {
namespace {

// ThreadSanitizer runs a signal's handler when it sees fit, and cannot follow a jump out of one: the
// runtime's ways out of a fault or a spinning thread are not for the tsan preset.
constexpr const char* k_no_escape_under_tsan =
    "skipped under ThreadSanitizer: it defers signals and cannot follow a handler that leaves by a jump";

TEST_CASE("a deadlock is reported with where each thread waits, not a hang", "[cpu_runtime][failure]") {
  std::vector<int> out(64, 0);
  int* p = out.data();
  for (const Schedule& s : all_schedules()) {
    const LaunchResult r = run(kernel("leap_cpu_test_barrier", "deadlock"), {2}, {64}, 0, s, LaunchOptions{}, p);
    INFO(r.message);
    CHECK(r.failure == Failure::deadlock);
    CHECK_THAT(r.message, Catch::Contains("thread 0 waiting at __syncthreads (") &&
                              Catch::Contains("threads 1-31 waiting at __shfl_sync with mask 0xffffffff (") &&
                              Catch::Contains("threads 32-63 exited") && Catch::Contains("barrier.cu:"));
  }
}

TEST_CASE("one barrier reached at two call sites is a divergent barrier, unless allowed", "[cpu_runtime][failure]") {
  std::vector<int> out(32, 0);
  int* p = out.data();
  const Kernel& k = kernel("leap_cpu_test_barrier", "divergent");
  const LaunchResult r = run(k, {1}, {32}, 0, Schedule::in_order(), LaunchOptions{}, p);
  CHECK(r.failure == Failure::divergent_barrier);
  CHECK_THAT(r.message, Catch::Contains("threads 0-15 waiting at __syncthreads") &&
                            Catch::Contains("threads 16-31 waiting at __syncthreads"));
  LaunchOptions allow;
  allow.allow_divergent_barriers = true;
  CHECK(run(k, {1}, {32}, 0, Schedule::in_order(), allow, p).ok());
  CHECK(out == std::vector<int>(32, 1));
}

TEST_CASE("threads that exit before a barrier count as arrived, or fail when asked", "[cpu_runtime][failure]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "exit_before_barrier");
  for (const Schedule& s : all_schedules()) {
    std::vector<int> out(32, 0);
    int* p = out.data();
    run_ok(k, {1}, {32}, 0, s, p);
    for (int t = 0; t < 32; ++t) REQUIRE(out[static_cast<std::size_t>(t)] == (t < 16 ? 1 : 0));
  }
  std::vector<int> out(32, 0);
  int* p = out.data();
  LaunchOptions strict;
  strict.allow_exit_before_barrier = false;
  const LaunchResult r = run(k, {1}, {32}, 0, Schedule::reversed(), strict, p);
  CHECK(r.failure == Failure::barrier_after_exit);
  CHECK_THAT(r.message, Catch::Contains("threads 16-31 exited"));
}

TEST_CASE("__trap and a failed assert stop the launch with the thread and the line", "[cpu_runtime][failure]") {
  std::vector<int> out(32, 0);
  int* p = out.data();
  const LaunchResult trap =
      run(kernel("leap_cpu_test_barrier", "traps"), {3}, {32}, 0, Schedule::in_order(), LaunchOptions{}, p);
  CHECK(trap.failure == Failure::trap);
  CHECK_THAT(trap.message, Catch::Contains("block (0,0,0)") && Catch::Contains("thread 5 (5,0,0)") &&
                               Catch::Contains("__trap()") && Catch::Contains("barrier.cu:"));
  std::vector<int> in(32, 1);
  in[9] = -1;
  const int* pin = in.data();
  const LaunchResult failed =
      run(kernel("leap_cpu_test_barrier", "asserts"), {1}, {32}, 0, Schedule::in_order(), LaunchOptions{}, pin);
  CHECK(failed.failure == Failure::trap);
  CHECK_THAT(failed.message, Catch::Contains("thread 9") && Catch::Contains("assert(in[threadIdx.x] >= 0) failed"));
}

TEST_CASE("a write past the dynamic shared memory is caught at the guard page", "[cpu_runtime][failure][shared]") {
  if (leap_test::k_thread_sanitizer) {
    WARN(k_no_escape_under_tsan);
    return;
  }
  const int n = 256;
  float out = 0;
  float* p = &out;
  const LaunchResult r = run(kernel("leap_cpu_test_barrier", "dynamic_overrun"), {1}, {32}, n * sizeof(float),
                             Schedule::in_order(), LaunchOptions{}, n, p);
  CHECK(r.failure == Failure::shared_out_of_range);
  CHECK_THAT(r.message, Catch::Contains("past the launch's 1024 bytes of dynamic shared memory"));
  // The runtime is whole afterwards: the next launch runs.
  std::vector<int> sums(1, 0);
  std::vector<int> in(256, 1);
  const int* pin = in.data();
  int* ps = sums.data();
  run_ok(kernel("leap_cpu_test_barrier", "tree_sum"), {1}, {256}, 0, Schedule::in_order(), pin, ps);
  CHECK(sums[0] == 256);
}

TEST_CASE("a stack overflow is caught at the guard page below the thread's stack", "[cpu_runtime][failure]") {
  if (leap_test::k_thread_sanitizer) {
    WARN(k_no_escape_under_tsan);
    return;
  }
  int sink = 0;
  int* p = &sink;
  LaunchOptions small;
  small.stack_bytes = 64 * 1024;
  const LaunchResult r = run(kernel("leap_cpu_test_barrier", "stack_hog"), {1}, {2}, 0, Schedule::in_order(), small, p);
  CHECK(r.failure == Failure::stack_overflow);
  CHECK_THAT(r.message, Catch::Contains("overflowed its stack"));
}

TEST_CASE("a thread that spins on another thread's write stops at the time limit", "[cpu_runtime][failure]") {
  if (leap_test::k_thread_sanitizer) {
    WARN(k_no_escape_under_tsan);
    return;
  }
  int flag = 0;
  int* p = &flag;
  LaunchOptions limited;
  limited.time_limit = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const LaunchResult r =
      run(kernel("leap_cpu_test_barrier", "spin_on_flag"), {1}, {32}, 0, Schedule::in_order(), limited, p);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.failure == Failure::time_limit);
  CHECK_THAT(r.message, Catch::Contains("thread 0 (0,0,0)") && Catch::Contains("time limit"));
  CHECK(took < std::chrono::seconds(10));
  // Reversed, the writer runs first and the spinning thread finds the flag set.
  flag = 0;
  CHECK(run(kernel("leap_cpu_test_barrier", "spin_on_flag"), {1}, {32}, 0, Schedule::reversed(), limited, p).ok());
}

TEST_CASE("a launch no GPU accepts, or arguments that do not fit, throw LaunchError naming them",
          "[cpu_runtime][failure]") {
  const Kernel& k = kernel("leap_cpu_test_barrier", "tree_sum");
  std::vector<int> buf(256);
  const int* in = buf.data();
  int* out = buf.data();
  CHECK_THROWS_WITH(run(k, {1}, {1025}, 0, Schedule::in_order(), LaunchOptions{}, in, out),
                    Catch::Contains("block.x = 1025"));
  CHECK_THROWS_WITH(run(k, {1}, {32, 32, 2}, 0, Schedule::in_order(), LaunchOptions{}, in, out),
                    Catch::Contains("2048 threads"));
  CHECK_THROWS_WITH(run(k, {0}, {32}, 0, Schedule::in_order(), LaunchOptions{}, in, out),
                    Catch::Contains("grid.x = 0"));
  CHECK_THROWS_WITH(run(k, {1}, {32}, 0, Schedule::in_order(), LaunchOptions{}, in),
                    Catch::Contains("tree_sum(pointer, pointer) takes 2 arguments, the launch gives 1"));
  const float wrong = 1.0f;
  CHECK_THROWS_WITH(run(k, {1}, {32}, 0, Schedule::in_order(), LaunchOptions{}, in, wrong),
                    Catch::Contains("argument 1 is floating of 4 bytes, the parameter pointer of 8"));
  CHECK_THROWS_WITH(run(k, {1}, {32}, 300 * 1024, Schedule::in_order(), LaunchOptions{}, in, out),
                    Catch::Contains("dynamic_shared_bytes = 307200"));
  CHECK_THROWS_WITH(module("leap_cpu_test_barrier").kernel("nope"),
                    Catch::Contains("has no kernel 'nope'") && Catch::Contains("tree_sum"));
}

}  // namespace
}  // namespace leap::cpu_runtime::test
