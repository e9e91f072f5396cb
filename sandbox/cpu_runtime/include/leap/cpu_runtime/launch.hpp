// SPDX-License-Identifier: Apache-2.0
// Running a kernel of a loaded module (module.hpp) on the CPU, for code the project or a task's author
// wrote: candidates never run here (they are hostile, and stay on the device, confined).
//
// A launch runs every block of the grid; the threads of a block are fibers on one OS thread, switched
// only where CUDA makes them wait for each other (__syncthreads, the warp collectives), so a thread
// that never waits costs a function call. Blocks run one after another, or on `workers` OS threads.
// The Schedule decides the order: in order, reversed, or random (seeded) among the threads that may
// run, between every pair of barriers, and the same for the blocks. A kernel whose result depends on
// the order (a missing barrier, a race on shared or global memory, a read of shared memory nobody
// wrote, which holds a byte that differs between schedules) gives different outputs under different
// schedules; a correct kernel gives the same.
//
// A kernel's misbehaviour is a result, never an exception: a deadlock (threads waiting at barriers
// or warp collectives the others never reach), a divergent barrier (threads waiting at different
// __syncthreads), warp collectives that disagree or read lanes that are not there, a trap or failed
// assert, an access past the dynamic shared memory, a stack overflow, the time limit. Misuse (a
// launch shape no GPU accepts, arguments that do not fit the kernel's parameters) throws LaunchError.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace leap::cpu_runtime {

class Kernel;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The order of the threads of a block between their barriers, and of the blocks of the grid.
class Schedule {
 public:
  enum class Order : std::uint8_t { in_order, reversed, random };
  static Schedule in_order() noexcept { return Schedule(Order::in_order, 0); }
  static Schedule reversed() noexcept { return Schedule(Order::reversed, 0); }
  static Schedule random(std::uint64_t seed) noexcept { return Schedule(Order::random, seed); }
  // The schedules a verification runs: in order, reversed, and `randoms` random ones from `seed`.
  static std::vector<Schedule> standard(std::uint64_t seed = 1, int randoms = 2);

  Order order() const noexcept { return order_; }
  std::uint64_t seed() const noexcept { return seed_; }
  std::string name() const;  // "in_order", "reversed", "random(42)"

 private:
  Schedule(Order order, std::uint64_t seed) noexcept : order_(order), seed_(seed) {}
  Order order_;
  std::uint64_t seed_;
};

// What a kernel parameter is, as the module recorded it from the kernel's own type.
enum class ParamKind : std::uint8_t { pointer, integer, floating, other };
std::string_view to_string(ParamKind kind) noexcept;

// One launch argument: its bytes, and what they are, checked against the parameter before the launch.
struct Argument {
  const void* data = nullptr;
  std::size_t size = 0;
  ParamKind kind = ParamKind::other;

  template <class T>
  static Argument of(const T& value) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are bytes: pass trivially copyable values");
    ParamKind kind = ParamKind::other;
    if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>) {
      kind = ParamKind::pointer;
    } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
      kind = ParamKind::integer;
    } else if constexpr (std::is_floating_point_v<T>) {
      kind = ParamKind::floating;
    }
    return Argument{&value, sizeof(T), kind};
  }
};

struct LaunchOptions {
  unsigned workers = 1;                              // OS threads running blocks; 0: one per hardware thread
  std::size_t stack_bytes = std::size_t{256} << 10;  // each CUDA thread's stack, with a guard page below it
  std::chrono::milliseconds time_limit{0};  // the whole launch, wall clock; 0: none (a spinning kernel then hangs)
  bool allow_exit_before_barrier = true;    // a barrier completes without the threads that exited, as GPUs do;
                                            // false: a barrier some threads exited before is a failure
  bool allow_divergent_barriers = false;    // threads at different __syncthreads call sites: a failure
                                            // (undefined in CUDA), unless this is true
};

enum class Failure : std::uint8_t {
  none,
  deadlock,             // no thread can go on: each waits for one that never comes
  divergent_barrier,    // one barrier reached at different call sites or with different operations
  barrier_after_exit,   // a barrier some threads exited before (only when allow_exit_before_barrier is false)
  warp_mismatch,        // lanes of one mask at different warp collectives, or a mask without the caller
  invalid_shuffle,      // a shuffle reads a lane that exited, is outside the mask or does not exist
  trap,                 // __trap, a failed assert, an exception, a misuse the kernel headers detect
  shared_out_of_range,  // a read or write past the launch's dynamic shared memory
  stack_overflow,       // a CUDA thread used more than LaunchOptions::stack_bytes
  time_limit,           // the launch ran past LaunchOptions::time_limit
};
std::string_view to_string(Failure failure) noexcept;

// What a launch cost the runtime, for tests and benchmarks.
struct LaunchStats {
  std::uint64_t blocks = 0;    // blocks run to their end
  std::uint64_t switches = 0;  // fiber switches, a worker's into and out of each block included
  std::uint64_t stacks = 0;    // stacks the busiest worker needed (one per thread that waited at once)
};

struct LaunchResult {
  Failure failure = Failure::none;
  std::string message;  // what happened and where: the block, the threads, the lines of the source
  LaunchStats stats;
  bool ok() const noexcept { return failure == Failure::none; }
};

// A launch no GPU would accept, or arguments that do not fit the kernel. The message names the
// argument, its value and the limit or the kernel's signature.
class LaunchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The launch limits of every current GPU (as the sandbox's task.hpp): blocks per grid and threads per
// block by axis, threads per block in all, and the largest dynamic shared memory a block can opt in to.
inline constexpr unsigned k_max_grid[3] = {2147483647u, 65535u, 65535u};
inline constexpr unsigned k_max_block[3] = {1024u, 1024u, 64u};
inline constexpr unsigned k_max_block_threads = 1024;
inline constexpr std::size_t k_max_dynamic_shared_bytes = std::size_t{227} << 10;

// args[i] points at the value of parameter i (cuLaunchKernel's form); only the count can be checked.
LaunchResult launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                    std::span<void* const> args, const Schedule& schedule, const LaunchOptions& options = {});
// Each argument's size and kind are checked against the parameter's first.
LaunchResult launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                    std::span<const Argument> args, const Schedule& schedule, const LaunchOptions& options = {});

}  // namespace leap::cpu_runtime
