// SPDX-License-Identifier: Apache-2.0
// The boundary between a kernel module and the CPU runtime that loads it.
//
// A module is a trusted .cu compiled by the host compiler against these headers (leap_cpu/prelude.hpp)
// into a shared object. It exports one function, leap_cpu_module_attach, which takes the runtime's
// hooks and returns the module's table: every kernel found in the source, with a thread entry that
// unpacks the launch's arguments (cuLaunchKernel's void** form) into the kernel's own parameter types,
// and each parameter's kind, size and alignment so that a launch can be checked before it runs.
//
// What crosses the boundary, and who writes it:
//   ThreadState    the runtime, once per CUDA thread; the module reads threadIdx, shared memory from it
//   Hooks          the runtime; the module calls them where a thread must wait for others (barriers,
//                  warp collectives) or stop (a trap), and they return on the same thread
//   ModuleTable    the module; the runtime reads it once after dlopen
// Both sides compare k_version and the structs' sizes; a mismatch is refused at load time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace leap_cpu::abi {

inline constexpr unsigned k_version = 1;
inline constexpr unsigned k_warp_size = 32;

struct Index3 {
  unsigned x, y, z;
};

// One CUDA thread as its kernel sees it. Valid from the thread's start to the end of its block.
struct ThreadState {
  Index3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned linear_tid;           // x + y * blockDim.x + z * blockDim.x * blockDim.y
  unsigned lane, warp;           // linear_tid % 32, linear_tid / 32: warps are cut from the linear index, as on a GPU
  unsigned block_threads;        // blockDim.x * blockDim.y * blockDim.z
  unsigned char* static_shared;  // the block's static __shared__ variables, each at its slot's offset
  std::uint64_t static_shared_bytes;  // the room for them (a slot past it is a trap)
  unsigned char* dynamic_shared;      // extern __shared__: the launch's dynamic_shared_bytes, 16-byte aligned
  std::uint64_t dynamic_shared_bytes;
  unsigned char poison;  // the byte uninitialised shared memory holds in this launch
};

// Where a thread waits or stops, from std::source_location at the call in the kernel's source.
struct Where {
  const char* file;
  unsigned line;
  const char* function;
};

enum class BarrierOp : int { sync, count, all, any };  // __syncthreads, _count, _and, _or

// Warp collectives. Lanes meet when every non-exited lane of the mask has arrived with the same
// operation and mask, as shfl.sync, vote.sync, match.sync, redux.sync and bar.warp.sync require.
enum class WarpOp : int {
  sync,       // __syncwarp
  shfl_idx,   // the shuffles: `source` is the lane to read, computed by the caller (its own lane when
  shfl_up,    //   the CUDA rules keep its own value); reading a lane that exited or is outside the mask
  shfl_down,  //   is an error, since the GPU gives an undefined value
  shfl_xor,
  ballot,     // the mask of participating lanes whose value is non-zero
  any,        // 1 when some participating lane's value is non-zero
  all,        // 1 when every participating lane's value is non-zero
  match_any,  // the mask of participating lanes whose value equals this lane's
  match_all,  // the participating mask when all values are equal, else 0
  reduce_add,
  reduce_min_unsigned,
  reduce_max_unsigned,
  reduce_min_signed,
  reduce_max_signed,  // on 32 bits
  reduce_and,
  reduce_or,
  reduce_xor
};

struct Hooks {
  unsigned version;
  unsigned size;  // sizeof(Hooks)
  // Waits at the block's barrier; returns the number of threads whose predicate was non-zero (count),
  // or 1/0 (all, any), or 0 (sync).
  int (*barrier)(const ThreadState* self, BarrierOp op, int predicate, const Where* where);
  // Waits for the lanes of `mask`, then returns this lane's result (see WarpOp).
  std::uint64_t (*warp)(const ThreadState* self, WarpOp op, unsigned mask, std::uint64_t value, unsigned source,
                        const Where* where);
  // __activemask: waits until no lane of the warp can run on without waiting (each has exited or waits
  // somewhere), then returns the lanes that wait here, at this call site: the lanes that a GPU would
  // find converged at this point.
  unsigned (*active_mask)(const ThreadState* self, const Where* where);
  // Stops the launch with `what` (__trap, a failed assert, a misuse the headers detect). Never returns.
  void (*trap)(const ThreadState* self, const char* what, const Where* where);
  // Nanoseconds of a monotonic clock (clock64, __globaltimer).
  std::uint64_t (*clock)(const ThreadState* self);
};

// The kernel's thread entry: runs the kernel once, as the thread `self`, with args[i] pointing at the
// value of parameter i.
using RunThread = void (*)(const ThreadState* self, void* const* args);

enum class ParamKind : int { pointer, integer, floating, other };

struct Param {
  ParamKind kind;
  unsigned size;
  unsigned align;
};

struct Kernel {
  const char* name;
  RunThread run;
  unsigned param_count;
  const Param* params;
};

struct ModuleTable {
  unsigned version;
  unsigned thread_state_size;  // sizeof(ThreadState) as the module was compiled
  unsigned hooks_size;         // sizeof(Hooks) as the module was compiled
  unsigned kernel_count;
  const Kernel* kernels;
  // The module's static __shared__ slots take [0, *static_shared_used) of every block's arena; slots
  // are placed when first reached, so the value only grows (read it with an atomic load).
  std::uint64_t* static_shared_used;
};

// extern "C" const ModuleTable* leap_cpu_module_attach(const Hooks* hooks): the module's one export.
// It keeps `hooks` for the module's lifetime and returns nullptr when their version or size differs.
inline constexpr const char k_attach_symbol[] = "leap_cpu_module_attach";
using Attach = const ModuleTable* (*)(const Hooks* hooks);

}  // namespace leap_cpu::abi
