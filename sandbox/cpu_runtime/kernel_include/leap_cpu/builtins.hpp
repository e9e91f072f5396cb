// SPDX-License-Identifier: Apache-2.0
// The CUDA thread's identity and everything that makes it wait for other threads: threadIdx and its
// kin, __syncthreads and its reductions, __syncwarp, the shuffles, votes, matches and warp reductions,
// __activemask, __trap, the clocks and fences.
//
// Each call that waits goes through the runtime's hooks (abi.hpp), which switch to another CUDA
// thread (a fiber) and come back once the others have arrived. The thread's own state pointer `self`
// is per OS thread and another fiber may set it meanwhile, so every hook call restores it on return.
// The source location of the call travels with it: a deadlock or a divergent barrier is reported at
// the line of the kernel's source where each thread waits.
#pragma once

#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "leap_cpu/abi.hpp"
#include "leap_cpu/vector_types.hpp"

namespace leap_cpu::detail {

inline const abi::Hooks* hooks = nullptr;                    // set once by leap_cpu_module_attach
inline thread_local const abi::ThreadState* self = nullptr;  // the CUDA thread running on this OS thread

inline abi::Where where_of(const std::source_location& loc) {
  return abi::Where{loc.file_name(), static_cast<unsigned>(loc.line()), loc.function_name()};
}

[[noreturn]] inline void trap(const char* what, const std::source_location& loc = std::source_location::current()) {
  const abi::Where w = where_of(loc);
  hooks->trap(self, what, &w);
  __builtin_unreachable();
}

inline int barrier(abi::BarrierOp op, int predicate, const std::source_location& loc) {
  const abi::ThreadState* me = self;
  const abi::Where w = where_of(loc);
  const int r = hooks->barrier(me, op, predicate, &w);
  self = me;
  return r;
}

inline std::uint64_t warp(abi::WarpOp op, unsigned mask, std::uint64_t value, unsigned source,
                          const std::source_location& loc) {
  const abi::ThreadState* me = self;
  const abi::Where w = where_of(loc);
  const std::uint64_t r = hooks->warp(me, op, mask, value, source, &w);
  self = me;
  return r;
}

template <class T>
std::uint64_t to_word(const T& v) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "warp collectives exchange values of at most 8 bytes, as CUDA's overloads do");
  std::uint64_t w = 0;
  std::memcpy(&w, &v, sizeof(T));
  return w;
}
template <class T>
T from_word(std::uint64_t w) {
  T v;
  std::memcpy(&v, &w, sizeof(T));
  return v;
}

inline uint3 index_of(const abi::Index3& i) { return uint3{i.x, i.y, i.z}; }
inline uint3 thread_idx() { return index_of(self->thread_idx); }
inline uint3 block_idx() { return index_of(self->block_idx); }
inline dim3 block_dim() { return dim3(self->block_dim.x, self->block_dim.y, self->block_dim.z); }
inline dim3 grid_dim() { return dim3(self->grid_dim.x, self->grid_dim.y, self->grid_dim.z); }
inline unsigned lane_id() { return self->lane; }

// The source lane of a shuffle by CUDA's rules; a lane that the rules leave alone reads itself.
inline void check_width(int width, const std::source_location& loc) {
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) trap("shuffle width must be a power of 2 up to 32", loc);
}
inline unsigned shfl_idx_source(unsigned lane, int src, int width) {
  const unsigned w = static_cast<unsigned>(width);
  return (lane & ~(w - 1)) + (static_cast<unsigned>(src) & (w - 1));
}
inline unsigned shfl_up_source(unsigned lane, unsigned delta, int width) {
  const unsigned w = static_cast<unsigned>(width);
  return (lane & (w - 1)) >= delta ? lane - delta : lane;
}
inline unsigned shfl_down_source(unsigned lane, unsigned delta, int width) {
  const unsigned w = static_cast<unsigned>(width);
  return (lane & (w - 1)) + delta < w ? lane + delta : lane;
}
inline unsigned shfl_xor_source(unsigned lane, int lane_mask, int width) {
  const unsigned w = static_cast<unsigned>(width);
  const unsigned s = lane ^ static_cast<unsigned>(lane_mask);
  // An earlier group may be read, a later one not (its own value is returned).
  return s >= 32 || (s & ~(w - 1)) > (lane & ~(w - 1)) ? lane : s;
}

}  // namespace leap_cpu::detail

#define threadIdx (::leap_cpu::detail::thread_idx())
#define blockIdx (::leap_cpu::detail::block_idx())
#define blockDim (::leap_cpu::detail::block_dim())
#define gridDim (::leap_cpu::detail::grid_dim())
inline constexpr int warpSize = 32;

// ---- the block's barrier ---------------------------------------------------------------------------
inline void __syncthreads(const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::barrier(::leap_cpu::abi::BarrierOp::sync, 0, loc);
}
inline int __syncthreads_count(int predicate, const std::source_location& loc = std::source_location::current()) {
  return ::leap_cpu::detail::barrier(::leap_cpu::abi::BarrierOp::count, predicate != 0, loc);
}
inline int __syncthreads_and(int predicate, const std::source_location& loc = std::source_location::current()) {
  return ::leap_cpu::detail::barrier(::leap_cpu::abi::BarrierOp::all, predicate != 0, loc);
}
inline int __syncthreads_or(int predicate, const std::source_location& loc = std::source_location::current()) {
  return ::leap_cpu::detail::barrier(::leap_cpu::abi::BarrierOp::any, predicate != 0, loc);
}

// ---- warps ---------------------------------------------------------------------------------------------
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu, const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::sync, mask, 0, ::leap_cpu::detail::lane_id(), loc);
}
inline unsigned __activemask(const std::source_location& loc = std::source_location::current()) {
  const ::leap_cpu::abi::ThreadState* me = ::leap_cpu::detail::self;
  const ::leap_cpu::abi::Where w = ::leap_cpu::detail::where_of(loc);
  const unsigned r = ::leap_cpu::detail::hooks->active_mask(me, &w);
  ::leap_cpu::detail::self = me;
  return r;
}

template <class T>
T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32,
              const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::check_width(width, loc);
  const unsigned s = ::leap_cpu::detail::shfl_idx_source(::leap_cpu::detail::lane_id(), srcLane, width);
  return ::leap_cpu::detail::from_word<T>(
      ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::shfl_idx, mask, ::leap_cpu::detail::to_word(var), s, loc));
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32,
                 const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::check_width(width, loc);
  const unsigned s = ::leap_cpu::detail::shfl_up_source(::leap_cpu::detail::lane_id(), delta, width);
  return ::leap_cpu::detail::from_word<T>(
      ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::shfl_up, mask, ::leap_cpu::detail::to_word(var), s, loc));
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32,
                   const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::check_width(width, loc);
  const unsigned s = ::leap_cpu::detail::shfl_down_source(::leap_cpu::detail::lane_id(), delta, width);
  return ::leap_cpu::detail::from_word<T>(
      ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::shfl_down, mask, ::leap_cpu::detail::to_word(var), s, loc));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32,
                  const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::check_width(width, loc);
  const unsigned s = ::leap_cpu::detail::shfl_xor_source(::leap_cpu::detail::lane_id(), laneMask, width);
  return ::leap_cpu::detail::from_word<T>(
      ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::shfl_xor, mask, ::leap_cpu::detail::to_word(var), s, loc));
}

inline unsigned __ballot_sync(unsigned mask, int predicate,
                              const std::source_location& loc = std::source_location::current()) {
  return static_cast<unsigned>(::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::ballot, mask, predicate != 0,
                                                        ::leap_cpu::detail::lane_id(), loc));
}
inline int __any_sync(unsigned mask, int predicate, const std::source_location& loc = std::source_location::current()) {
  return static_cast<int>(
      ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::any, mask, predicate != 0, ::leap_cpu::detail::lane_id(), loc));
}
inline int __all_sync(unsigned mask, int predicate, const std::source_location& loc = std::source_location::current()) {
  return static_cast<int>(
      ::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::all, mask, predicate != 0, ::leap_cpu::detail::lane_id(), loc));
}
inline int __uni_sync(unsigned mask, int predicate, const std::source_location& loc = std::source_location::current()) {
  const unsigned b = __ballot_sync(mask, predicate, loc);
  return b == 0 || b == (mask & __activemask());
}
template <class T>
unsigned __match_any_sync(unsigned mask, T value, const std::source_location& loc = std::source_location::current()) {
  return static_cast<unsigned>(::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::match_any, mask,
                                                        ::leap_cpu::detail::to_word(value),
                                                        ::leap_cpu::detail::lane_id(), loc));
}
template <class T>
unsigned __match_all_sync(unsigned mask, T value, int* pred,
                          const std::source_location& loc = std::source_location::current()) {
  const auto r = static_cast<unsigned>(::leap_cpu::detail::warp(::leap_cpu::abi::WarpOp::match_all, mask,
                                                                ::leap_cpu::detail::to_word(value),
                                                                ::leap_cpu::detail::lane_id(), loc));
  *pred = r != 0;
  return r;
}

#define LEAP_CPU_WARP_REDUCE(name, type, op)                                                                        \
  inline type name(unsigned mask, type value, const std::source_location& loc = std::source_location::current()) {  \
    return static_cast<type>(::leap_cpu::detail::warp(                                                              \
        ::leap_cpu::abi::WarpOp::op, mask, static_cast<std::uint32_t>(value), ::leap_cpu::detail::lane_id(), loc)); \
  }
LEAP_CPU_WARP_REDUCE(__reduce_add_sync, unsigned, reduce_add)
LEAP_CPU_WARP_REDUCE(__reduce_add_sync, int, reduce_add)
LEAP_CPU_WARP_REDUCE(__reduce_min_sync, unsigned, reduce_min_unsigned)
LEAP_CPU_WARP_REDUCE(__reduce_min_sync, int, reduce_min_signed)
LEAP_CPU_WARP_REDUCE(__reduce_max_sync, unsigned, reduce_max_unsigned)
LEAP_CPU_WARP_REDUCE(__reduce_max_sync, int, reduce_max_signed)
LEAP_CPU_WARP_REDUCE(__reduce_and_sync, unsigned, reduce_and)
LEAP_CPU_WARP_REDUCE(__reduce_or_sync, unsigned, reduce_or)
LEAP_CPU_WARP_REDUCE(__reduce_xor_sync, unsigned, reduce_xor)
#undef LEAP_CPU_WARP_REDUCE

// ---- stopping, clocks, fences ----------------------------------------------------------------------
[[noreturn]] inline void __trap(const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::trap("__trap()", loc);
}
[[noreturn]] inline void __brkpt(const std::source_location& loc = std::source_location::current()) {
  ::leap_cpu::detail::trap("__brkpt()", loc);
}
inline long long clock64() {
  return static_cast<long long>(::leap_cpu::detail::hooks->clock(::leap_cpu::detail::self));
}
inline unsigned long long __globaltimer() { return ::leap_cpu::detail::hooks->clock(::leap_cpu::detail::self); }
inline void __nanosleep(unsigned) {}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
