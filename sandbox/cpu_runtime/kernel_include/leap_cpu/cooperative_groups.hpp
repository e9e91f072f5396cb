// SPDX-License-Identifier: Apache-2.0
// The basic cooperative groups (cooperative_groups.h, reduce.h): the block (this_thread_block), tiles
// of a power of two up to 32 threads (tiled_partition<N>, and the run-time tiled_partition(g, n)),
// coalesced_threads, and reduce with CUDA's operator objects. Their sync, shuffles and votes are the
// barrier and warp collectives of builtins.hpp over the tile's mask. this_grid() exists so that code
// naming it compiles; grid.sync() stops the launch (the runtime runs blocks one after another, so a
// grid-wide barrier could never be met).
#pragma once

#include <source_location>

#include "leap_cpu/builtins.hpp"

namespace cooperative_groups {

namespace details {
inline unsigned tile_mask(unsigned size, unsigned lane) {
  return size == 32 ? 0xFFFFFFFFu : ((1u << size) - 1u) << (lane & ~(size - 1u));
}
}  // namespace details

class thread_block {
 public:
  static void sync(const std::source_location& loc = std::source_location::current()) { __syncthreads(loc); }
  static void barrier_wait(const std::source_location& loc = std::source_location::current()) { __syncthreads(loc); }
  static unsigned thread_rank() { return ::leap_cpu::detail::self->linear_tid; }
  static unsigned size() { return ::leap_cpu::detail::self->block_threads; }
  static unsigned num_threads() { return size(); }
  static dim3 group_index() { return dim3(blockIdx); }
  static dim3 thread_index() { return dim3(threadIdx); }
  static dim3 group_dim() { return blockDim; }
  static dim3 dim_threads() { return blockDim; }
  static bool is_valid() { return true; }
};

inline thread_block this_thread_block() { return thread_block{}; }

// A group of consecutive lanes of one warp, known by its size at run time.
class thread_group {
 public:
  thread_group(unsigned size, unsigned mask) : size_(size), mask_(mask) {}
  void sync(const std::source_location& loc = std::source_location::current()) const { __syncwarp(mask_, loc); }
  unsigned thread_rank() const { return ::leap_cpu::detail::lane_id() & (size_ - 1u); }
  unsigned size() const { return size_; }
  unsigned num_threads() const { return size_; }
  unsigned meta_group_rank() const { return ::leap_cpu::detail::self->linear_tid / size_; }
  unsigned meta_group_size() const { return (::leap_cpu::detail::self->block_threads + size_ - 1u) / size_; }
  bool is_valid() const { return true; }
  unsigned build_mask() const { return mask_; }

 protected:
  unsigned size_;
  unsigned mask_;
};

template <unsigned Size, class Parent = void>
class thread_block_tile;

// The tile without its parent's type: every thread_block_tile<Size, Parent> converts to it, as in CUDA.
template <unsigned Size>
class thread_block_tile<Size, void> : public thread_group {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                "the CPU runtime's tiles are powers of two up to a warp (32 threads)");

 public:
  thread_block_tile() : thread_group(Size, details::tile_mask(Size, ::leap_cpu::detail::lane_id())) {}
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  unsigned thread_rank() const { return ::leap_cpu::detail::lane_id() & (Size - 1u); }
  template <class T>
  T shfl(T var, int src, const std::source_location& loc = std::source_location::current()) const {
    return __shfl_sync(mask_, var, src, static_cast<int>(Size), loc);
  }
  template <class T>
  T shfl_up(T var, unsigned delta, const std::source_location& loc = std::source_location::current()) const {
    return __shfl_up_sync(mask_, var, delta, static_cast<int>(Size), loc);
  }
  template <class T>
  T shfl_down(T var, unsigned delta, const std::source_location& loc = std::source_location::current()) const {
    return __shfl_down_sync(mask_, var, delta, static_cast<int>(Size), loc);
  }
  template <class T>
  T shfl_xor(T var, unsigned lane_mask, const std::source_location& loc = std::source_location::current()) const {
    return __shfl_xor_sync(mask_, var, static_cast<int>(lane_mask), static_cast<int>(Size), loc);
  }
  int any(int pred, const std::source_location& loc = std::source_location::current()) const {
    return __any_sync(mask_, pred, loc);
  }
  int all(int pred, const std::source_location& loc = std::source_location::current()) const {
    return __all_sync(mask_, pred, loc);
  }
  // The tile's own lanes, from its lane 0: bit i is the tile's thread of rank i.
  unsigned ballot(int pred, const std::source_location& loc = std::source_location::current()) const {
    return __ballot_sync(mask_, pred, loc) >> (::leap_cpu::detail::lane_id() & ~(Size - 1u));
  }
  template <class T>
  unsigned match_any(T value, const std::source_location& loc = std::source_location::current()) const {
    return __match_any_sync(mask_, value, loc) >> (::leap_cpu::detail::lane_id() & ~(Size - 1u));
  }
  template <class T>
  unsigned match_all(T value, int& pred, const std::source_location& loc = std::source_location::current()) const {
    return __match_all_sync(mask_, value, &pred, loc) >> (::leap_cpu::detail::lane_id() & ~(Size - 1u));
  }
};

template <unsigned Size, class Parent>
class thread_block_tile : public thread_block_tile<Size, void> {};

template <unsigned Size, class Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
  return thread_block_tile<Size, Parent>();
}

inline thread_group tiled_partition(const thread_group& parent, unsigned size) {
  if (size < 1 || size > 32 || (size & (size - 1)) != 0 || size > parent.size())
    ::leap_cpu::detail::trap("tiled_partition: the CPU runtime's tiles are powers of two up to 32 threads");
  return thread_group(size, details::tile_mask(size, ::leap_cpu::detail::lane_id()));
}
inline thread_group tiled_partition(const thread_block&, unsigned size) {
  return tiled_partition(thread_group(32, 0xFFFFFFFFu), size);
}

// The lanes of the warp that reach this point together (__activemask); ranks are among them.
class coalesced_group : public thread_group {
 public:
  explicit coalesced_group(unsigned mask) : thread_group(static_cast<unsigned>(__builtin_popcount(mask)), mask) {}
  unsigned thread_rank() const {
    return static_cast<unsigned>(__builtin_popcount(mask_ & ((1u << ::leap_cpu::detail::lane_id()) - 1u)));
  }
};
inline coalesced_group coalesced_threads(const std::source_location& loc = std::source_location::current()) {
  return coalesced_group(__activemask(loc));
}

class grid_group {
 public:
  void sync(const std::source_location& loc = std::source_location::current()) const {
    ::leap_cpu::detail::trap("grid_group::sync: the CPU runtime runs blocks one after another and has no grid barrier",
                             loc);
  }
  unsigned long long thread_rank() const {
    const auto& s = *::leap_cpu::detail::self;
    const unsigned long long block =
        s.block_idx.x + static_cast<unsigned long long>(s.grid_dim.x) *
                            (s.block_idx.y + static_cast<unsigned long long>(s.grid_dim.y) * s.block_idx.z);
    return block * s.block_threads + s.linear_tid;
  }
  unsigned long long size() const {
    const auto& s = *::leap_cpu::detail::self;
    return static_cast<unsigned long long>(s.grid_dim.x) * s.grid_dim.y * s.grid_dim.z * s.block_threads;
  }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return true; }
};
inline grid_group this_grid() { return grid_group{}; }

template <class Group>
void sync(const Group& g) {
  g.sync();
}
template <class Group>
auto thread_rank(const Group& g) {
  return g.thread_rank();
}
template <class Group>
auto group_size(const Group& g) {
  return g.size();
}

// ---- reduce.h ---------------------------------------------------------------------------------------
template <class T>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

// Every thread of the tile gets op folded over the tile's values (a butterfly, as the device's).
template <unsigned Size, class Parent, class T, class Op>
T reduce(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  for (unsigned offset = Size / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset));
  return value;
}
template <unsigned Size, class Parent, class T, class Op>
T inclusive_scan(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  for (unsigned offset = 1; offset < Size; offset *= 2) {
    const T other = tile.shfl_up(value, offset);
    if (tile.thread_rank() >= offset) value = op(value, other);
  }
  return value;
}
template <unsigned Size, class Parent, class T>
T inclusive_scan(const thread_block_tile<Size, Parent>& tile, T value) {
  return inclusive_scan(tile, value, plus<T>());
}
template <unsigned Size, class Parent, class T, class Op>
T exclusive_scan(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  const T inclusive = inclusive_scan(tile, value, op);
  const T shifted = tile.shfl_up(inclusive, 1);
  return tile.thread_rank() == 0 ? T{} : shifted;
}
template <unsigned Size, class Parent, class T>
T exclusive_scan(const thread_block_tile<Size, Parent>& tile, T value) {
  return exclusive_scan(tile, value, plus<T>());
}

}  // namespace cooperative_groups
