// SPDX-License-Identifier: Apache-2.0
// The host side of a correctness check: inputs drawn from a task's generators, the poison written
// into outputs before a run, and the comparison of a candidate's output with the reference's.
// Plain host code, so it is tested without a GPU; the evaluation worker uses exactly these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

// Round-to-nearest-even conversions for the 16-bit types.
std::uint16_t float_to_half(float f) noexcept;
float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_bfloat16(float f) noexcept;
float bfloat16_to_float(std::uint16_t b) noexcept;

// Element i of a buffer of `dtype` as a double.
double element_value(DType dtype, const void* data, std::size_t i) noexcept;

// Fills `out` (n elements of dtype) from the generator; the same seed gives the same bytes.
void generate(DType dtype, const Generator& generator, std::uint64_t seed, void* out, std::size_t n);

// Overwrites some of n drawn elements (at positions that follow from the seed, at least one of each
// kind where n allows) with the values a float kernel must get right and a careless one gets wrong:
// NaN, +Inf, -Inf, -0, the smallest and the largest subnormal of `dtype`. For inputs whose generator
// says `special`; int32 is left as it is.
void sprinkle_special_values(DType dtype, std::uint64_t seed, void* out, std::size_t n);

// The 32-bit word (or 16-bit half-word, for 16-bit types) outputs are filled with before a run: a
// quiet NaN for the float types, a seed-dependent value for int32 (no int is "impossible").
std::uint32_t poison_pattern(DType dtype, std::uint64_t seed) noexcept;

// A fresh seed for trial `trial` of an evaluation whose base seed is `base` (splitmix64).
std::uint64_t trial_seed(std::uint64_t base, std::uint64_t trial) noexcept;

struct Comparison {
  bool ok = true;
  std::size_t mismatches = 0;   // elements outside the tolerance (NaN where the reference is not, too)
  std::size_t first_index = 0;  // valid when !ok
  double first_expected = 0.0;
  double first_actual = 0.0;
  double max_abs_error = 0.0;  // over finite pairs
  double max_rel_error = 0.0;  // |a - e| / max(|e|, tiny), over finite pairs
  std::size_t nan_count = 0;   // NaNs in the candidate's output where the reference has none
};

// Element-wise: passes when |a - e| <= atol + rtol * |e|; NaN matches only NaN, infinities only
// the same infinity.
Comparison compare(DType dtype, const void* actual, const void* expected, std::size_t n, Tolerance tol) noexcept;

// "out: 3 of 1000003 elements differ (max abs err 0.42, max rel err 1.0); first at [1000000]:
// expected 0.1234, got nan" - the line feedback uses.
std::string describe(const Comparison& c, const std::string& buffer, std::size_t n);

}  // namespace leap::sandbox
