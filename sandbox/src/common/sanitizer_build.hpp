// SPDX-License-Identifier: Apache-2.0
// Which sanitizer this code is built with (the asan and tsan presets), for the few places where a
// sanitizer changes the rules a process lives by: its fixed shadow memory, its background thread.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define LEAP_SANDBOX_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LEAP_SANDBOX_UNDER_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define LEAP_SANDBOX_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LEAP_SANDBOX_UNDER_TSAN 1
#endif
#endif

namespace leap::sandbox::detail {

#ifdef LEAP_SANDBOX_UNDER_ASAN
inline constexpr bool k_built_with_address_sanitizer = true;
#else
inline constexpr bool k_built_with_address_sanitizer = false;
#endif

#ifdef LEAP_SANDBOX_UNDER_TSAN
inline constexpr bool k_built_with_thread_sanitizer = true;
#else
inline constexpr bool k_built_with_thread_sanitizer = false;
#endif

}  // namespace leap::sandbox::detail
