// SPDX-License-Identifier: Apache-2.0
// The one place leap's version is written. CMake reads it from here.
#pragma once

#define LEAP_VERSION_MAJOR 0
#define LEAP_VERSION_MINOR 1
#define LEAP_VERSION_PATCH 0

// Comparable as an integer: 0.1.0 -> 100.
#define LEAP_VERSION (LEAP_VERSION_MAJOR * 10000 + LEAP_VERSION_MINOR * 100 + LEAP_VERSION_PATCH)

namespace leap {
inline constexpr int version_major = LEAP_VERSION_MAJOR;
inline constexpr int version_minor = LEAP_VERSION_MINOR;
inline constexpr int version_patch = LEAP_VERSION_PATCH;
inline constexpr const char* version_string = "0.1.0";
static_assert(LEAP_VERSION == 100, "keep version_string in step with the LEAP_VERSION_* macros");
}  // namespace leap
