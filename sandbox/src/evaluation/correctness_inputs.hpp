// SPDX-License-Identifier: Apache-2.0
// The inputs of a correctness trial, drawn on the host from a task's generators, and the seed of
// each trial. Plain host code, tested without a GPU; the GPU runner uses exactly these. (Inputs for
// timed runs are drawn on the device: input_generator.hpp.) Internal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

// Fills `out` (n elements of dtype) from the generator; the same seed gives the same bytes.
void generate(DType dtype, const Generator& generator, std::uint64_t seed, void* out, std::size_t n);

// Overwrites some of n drawn elements (at positions that follow from the seed, at least one of each
// kind where n allows) with the values a float kernel must get right and a careless one gets wrong:
// NaN, +Inf, -Inf, -0, the smallest and the largest subnormal of `dtype`. For inputs whose generator
// says `special`; int32 is left as it is.
void sprinkle_special_values(DType dtype, std::uint64_t seed, void* out, std::size_t n);

// A buffer parameter's input for one trial at `sizes`: its generator (randint bounds resolved at the
// sizes) then, where the generator says `special`, the special values. The GPU runner's trials and
// `tasks verify` both draw with this.
void draw_input(const Param& buffer, const Sizes& sizes, std::uint64_t seed, void* out, std::size_t n);

// A fresh seed for trial `trial` of an evaluation whose base seed is `base` (splitmix64).
std::uint64_t trial_seed(std::uint64_t base, std::uint64_t trial) noexcept;

}  // namespace leap::sandbox
