// SPDX-License-Identifier: Apache-2.0
// Reading and writing single elements of a task's buffer types on the host, with the 16-bit types'
// round-to-nearest-even conversions. Plain host code, tested without a GPU. Internal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

// Round-to-nearest-even conversions for the 16-bit types.
std::uint16_t float_to_half(float f) noexcept;
float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_bfloat16(float f) noexcept;
float bfloat16_to_float(std::uint16_t b) noexcept;

// Element i of a buffer of `dtype` as a double.
double element_value(DType dtype, const void* data, std::size_t i) noexcept;

// Element i of a buffer of `dtype` set to v (converted, rounded to nearest even for the 16-bit types).
void store_element(DType dtype, void* out, std::size_t i, double v) noexcept;

}  // namespace leap::sandbox
