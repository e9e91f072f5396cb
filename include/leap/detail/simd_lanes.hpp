// SPDX-License-Identifier: Apache-2.0
// 16-byte SIMD vectors through GCC/Clang vector extensions. Internal.
//
// They compile to whatever SIMD the target has (SSE2 on baseline x86-64, NEON on AArch64, or wider
// where the user's flags allow) and need no -march. 16 bytes only: every SIMD target has them
// natively, whereas GCC splits wider generic vectors into scalar code for some operations. Code that
// uses them keeps a scalar path for other compilers, and tests hold both to the same results.
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
