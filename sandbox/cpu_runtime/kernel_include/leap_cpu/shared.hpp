// SPDX-License-Identifier: Apache-2.0
// Shared memory. The module compiler rewrites each __shared__ declaration (sandbox/cpu_runtime/src,
// the source rewrite) into a reference into the running block's arena:
//
//   __shared__ float partial[256];        typedef float T_partial[256];
//                                          static const ::leap_cpu::detail::SharedSlot S_partial(sizeof(T_partial),
//                                              alignof(T_partial));
//                                          T_partial& partial = S_partial.get<T_partial>();
//   extern __shared__ float part[];       typedef float T_part[];
//                                          T_part& part = ::leap_cpu::detail::dynamic_shared<T_part>();
//
// A slot is placed once, when the first thread reaches its declaration, at the same offset in every
// block's arena; the runtime fills [0, used) of the arena with the launch's poison byte before each
// block, so a read of shared memory nobody wrote shows as a difference between schedules. The dynamic
// part ends at a page the runtime keeps unmapped: reading or writing past the launch's dynamic size
// faults there and is reported as out-of-range shared memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "leap_cpu/builtins.hpp"

namespace leap_cpu::detail {

inline std::uint64_t static_shared_used = 0;  // the module's slots take [0, used) of each arena

class SharedSlot {
 public:
  SharedSlot(std::size_t size, std::size_t align, const std::source_location& loc = std::source_location::current()) {
    const std::uint64_t a = align < 16 ? 16 : align;
    std::uint64_t cur = __atomic_load_n(&static_shared_used, __ATOMIC_ACQUIRE), next = 0;
    do {
      offset_ = (cur + a - 1) / a * a;
      next = offset_ + size;
    } while (!__atomic_compare_exchange_n(&static_shared_used, &cur, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    if (next > self->static_shared_bytes) trap("static __shared__ memory beyond the runtime's arena", loc);
    // Blocks already running were poisoned before this slot existed: this block's copy is poisoned here.
    std::memset(self->static_shared + offset_, self->poison, size);
  }
  template <class T>
  T& get() const {
    return *reinterpret_cast<T*>(self->static_shared + offset_);
  }

 private:
  std::uint64_t offset_ = 0;
};

template <class T>
T& dynamic_shared() {
  return *reinterpret_cast<T*>(self->dynamic_shared);
}

}  // namespace leap_cpu::detail
