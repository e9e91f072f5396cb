// SPDX-License-Identifier: Apache-2.0
// What output buffers are filled with before every run, so that an element the candidate never
// writes cannot pass for a result. Internal.
#pragma once

#include <cstdint>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

// The 32-bit word (or 16-bit half-word, for 16-bit types) outputs are filled with before a run: a
// quiet NaN for the float types, a seed-dependent value for int32 and int8 (no int is "impossible").
std::uint32_t poison_pattern(DType dtype, std::uint64_t seed) noexcept;

}  // namespace leap::sandbox
