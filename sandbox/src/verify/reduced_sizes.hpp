// SPDX-License-Identifier: Apache-2.0
// A reduced copy of a task's timing sizes, small enough for the CPU runtime under every schedule
// and still of the timing sizes' shape: the largest size is halved, one at a time, until the task's
// bytes and flops (its size expressions; the buffers' bytes when it gives none), its outputs and the
// threads of its launch are under the caps; a halving that would make the task invalid (a dimension
// of zero, a launch out of range) is undone and that size kept. Then each even size above 2 loses one,
// so the copy is ragged. Deterministic: the same task gives the same sizes. Internal.
#pragma once

#include <cstdint>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::verify {

struct ReductionCaps {
  std::int64_t bytes = std::int64_t{1} << 20;
  std::int64_t flops = std::int64_t{1} << 23;
  std::int64_t output_elements = std::int64_t{1} << 16;
  std::int64_t threads = std::int64_t{1} << 17;  // of the task's own launch
};

Sizes reduced_timing_sizes(const TaskSpec& task, const ReductionCaps& caps = {});

}  // namespace leap::sandbox::verify
