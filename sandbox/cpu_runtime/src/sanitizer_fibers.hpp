// SPDX-License-Identifier: Apache-2.0
// Tells AddressSanitizer and ThreadSanitizer (the asan and tsan presets) about the runtime's stack
// switches, as they ask of any fiber library: ASan must know which stack is current (its checks and
// fake stacks depend on it), TSan must see each fiber as a thread of its own and each switch as a
// synchronisation. Without a sanitizer every function here is empty.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define LEAP_CPU_RUNTIME_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define LEAP_CPU_RUNTIME_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif

namespace leap::cpu_runtime::detail {

// A context's identity for the sanitizers: its stack and, for TSan, its fiber.
struct FiberIdentity {
  const void* bottom = nullptr;
  std::size_t size = 0;
  void* tsan_fiber = nullptr;
};

inline void* new_tsan_fiber() noexcept {
#ifdef LEAP_CPU_RUNTIME_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}
inline void delete_tsan_fiber([[maybe_unused]] void* fiber) noexcept {
#ifdef LEAP_CPU_RUNTIME_TSAN
  if (fiber != nullptr) __tsan_destroy_fiber(fiber);
#endif
}
inline void* current_tsan_fiber() noexcept {
#ifdef LEAP_CPU_RUNTIME_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}

// Right before a switch to `to`. `save` keeps the leaving context's ASan fake stack until it resumes;
// nullptr says the leaving context never resumes.
inline void before_switch([[maybe_unused]] void** save, [[maybe_unused]] const FiberIdentity& to) noexcept {
#ifdef LEAP_CPU_RUNTIME_ASAN
  __sanitizer_start_switch_fiber(save, to.bottom, to.size);
#endif
#ifdef LEAP_CPU_RUNTIME_TSAN
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
}

// Right after a switch, in the context that now runs: `saved` is what its before_switch kept (nullptr
// for a context's first run); `from`, when not null, receives the stack of the context that left.
inline void after_switch([[maybe_unused]] void* saved, [[maybe_unused]] FiberIdentity* from) noexcept {
#ifdef LEAP_CPU_RUNTIME_ASAN
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(saved, &bottom, &size);
  if (from != nullptr) {
    from->bottom = bottom;
    from->size = size;
  }
#endif
}

}  // namespace leap::cpu_runtime::detail
