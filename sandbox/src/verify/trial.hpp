// SPDX-License-Identifier: Apache-2.0
// One draw of a task's inputs at one size set, as the GPU runner's correctness trials draw them
// (correctness_inputs.hpp: the same generators, seeds and special values), with the scalars'
// values. Output buffers are allocated, not filled. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::verify {

using Bytes = std::vector<unsigned char>;

struct Trial {
  Sizes sizes;
  std::uint64_t seed = 0;
  std::vector<Bytes> buffers;   // by parameter; empty for scalars; out buffers zero-filled
  std::vector<double> scalars;  // by parameter; 0 for buffers
  std::vector<std::size_t> counts;  // element counts by parameter; 0 for scalars
};

bool is_input(const Param& p) noexcept;   // an in or inout buffer
bool is_output(const Param& p) noexcept;  // an out or inout buffer

// Draws every input of `task` at `sizes` from `seed`.
Trial draw_trial(const TaskSpec& task, const Sizes& sizes, std::uint64_t seed);

// Redraws buffer `param` of a trial from another seed (the other inputs stay).
void redraw_buffer(const TaskSpec& task, Trial& trial, std::size_t param, std::uint64_t seed);

}  // namespace leap::sandbox::verify
