// SPDX-License-Identifier: Apache-2.0
// Which sanitizer the test program was built with (the asan and tsan presets), for the few tests that
// cannot run under one and say why.
#pragma once

#include <cstddef>
#include <sanitizer/common_interface_defs.h>

#include "common/sanitizer_build.hpp"

namespace leap_test {

inline constexpr bool k_address_sanitizer = leap::sandbox::detail::k_built_with_address_sanitizer;
inline constexpr bool k_thread_sanitizer = leap::sandbox::detail::k_built_with_thread_sanitizer;
inline constexpr bool k_sanitizer = k_address_sanitizer || k_thread_sanitizer;

// Both sanitizers reserve terabytes of shadow address space in every process, and a compile child
// inherits it: under RLIMIT_AS its allocator runs out long before the candidate's share is used, so
// an address-space limit test measures the sanitizer, not the sandbox. Such tests skip with this.
inline constexpr const char* k_no_address_space_limits =
    "skipped under a sanitizer: its shadow memory and RLIMIT_AS do not mix (the compile child's allocator "
    "runs out before the limit under test is reached)";

// A sanitizer's own memory counts in a process's peak RSS and grows with what the program touches and
// frees: ThreadSanitizer shadows every touched byte with up to four more, AddressSanitizer keeps freed
// blocks resident in its quarantine. A bound that says "far less than the input" is scaled by this,
// which keeps it far below what holding the input whole would cost under the same sanitizer.
inline constexpr std::size_t k_rss_factor = k_thread_sanitizer ? 5 : k_address_sanitizer ? 4 : 1;

// ThreadSanitizer keeps a background thread in every process, forked children included, so a child
// that waits still uses CPU. A child that must look idle (to the idle window) stops it first, as the
// sandbox's own compile children do before they confine themselves.
inline void stop_sanitizer_thread() noexcept {
#ifdef LEAP_SANDBOX_UNDER_TSAN
  __sanitizer_sandbox_on_notify(nullptr);
#endif
}

}  // namespace leap_test
