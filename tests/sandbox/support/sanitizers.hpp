// SPDX-License-Identifier: Apache-2.0
// Which sanitizer the test program was built with (the asan and tsan presets), for the few tests that
// cannot run under one and say why.
#pragma once

namespace leap_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool k_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool k_address_sanitizer = true;
#else
inline constexpr bool k_address_sanitizer = false;
#endif
#else
inline constexpr bool k_address_sanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool k_thread_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool k_thread_sanitizer = true;
#else
inline constexpr bool k_thread_sanitizer = false;
#endif
#else
inline constexpr bool k_thread_sanitizer = false;
#endif

inline constexpr bool k_sanitizer = k_address_sanitizer || k_thread_sanitizer;

// Both sanitizers reserve terabytes of shadow address space in every process, and a compile child
// inherits it: under RLIMIT_AS its allocator runs out long before the candidate's share is used, so
// an address-space limit test measures the sanitizer, not the sandbox. Such tests skip with this.
inline constexpr const char* k_no_address_space_limits =
    "skipped under a sanitizer: its shadow memory and RLIMIT_AS do not mix (the compile child's allocator "
    "runs out before the limit under test is reached)";

// AddressSanitizer's quarantine holds freed blocks back from reuse, so a process's peak RSS grows with
// what it frees, not with what it holds: a bound on a worker's peak measures the sanitizer there.
inline constexpr const char* k_rss_under_address_sanitizer =
    "under AddressSanitizer, freed memory stays resident in its quarantine, so a peak-RSS bound measures "
    "the sanitizer, not the program";

}  // namespace leap_test
