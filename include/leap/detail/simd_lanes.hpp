// SPDX-License-Identifier: Apache-2.0
// 16-byte SIMD vectors through GCC/Clang vector extensions, and 32-byte ones for AVX2 code chosen at
// run time on x86-64. Internal.
//
// They compile to whatever SIMD the target has (SSE2 on baseline x86-64, NEON on AArch64, or wider
// where the user's flags allow) and need no -march. Code for every target uses 16 bytes only: every
// SIMD target has them natively, whereas GCC splits wider generic vectors into scalar code for some
// operations. Code that uses them keeps a scalar path for other compilers, and tests hold both to the
// same results. The 32-byte vectors below appear only in functions compiled for AVX2.
#pragma once

#include <cstdint>

#if defined(__GNUC__) || defined(__clang__)
#define LEAP_DETAIL_SIMD_LANES 1

namespace leap::detail {
typedef std::int32_t lanes_i32 __attribute__((vector_size(16)));
typedef std::int64_t lanes_i64 __attribute__((vector_size(16)));
typedef double lanes_f64 __attribute__((vector_size(16)));
}  // namespace leap::detail

#else
#define LEAP_DETAIL_SIMD_LANES 0
#endif

// 32-byte vectors for x86-64 code compiled for AVX2 through the target attribute, chosen at run time
// (wide_lanes_available() in rank_lanes.hpp): the library is header-only and cannot ask its users for
// -mavx2. Every function that takes, returns or computes these vectors carries LEAP_DETAIL_TARGET_AVX2
// (an AVX vector passed by value in baseline code changes the ABI), and runs only once the CPU was
// found to have AVX2.
#if LEAP_DETAIL_SIMD_LANES && defined(__x86_64__)
#define LEAP_DETAIL_WIDE_LANES 1
#define LEAP_DETAIL_TARGET_AVX2 __attribute__((target("avx2")))

namespace leap::detail {
typedef std::int64_t wide_i64 __attribute__((vector_size(32)));
typedef double wide_f64 __attribute__((vector_size(32)));

// Whether this CPU (and its OS, which must save the 32-byte registers) runs AVX2, asked once.
inline bool cpu_has_avx2() noexcept {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}
}  // namespace leap::detail

#else
#define LEAP_DETAIL_WIDE_LANES 0
#endif
