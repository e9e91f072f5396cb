// SPDX-License-Identifier: Apache-2.0
// A trusted source's kernels run on the CPU runtime for one trial: the task's own launch (a
// reference), or the plan the source declares (a shipped variant), with out buffers poisoned first
// as the GPU runner does, so an element nobody writes cannot pass. Internal.
#pragma once

#include <string>
#include <vector>

#include "leap/cpu_runtime/launch.hpp"
#include "leap/cpu_runtime/module.hpp"
#include "leap/sandbox/launch_plan.hpp"
#include "verify/trial.hpp"

namespace leap::sandbox::verify {

struct KernelRun {
  std::string failure;          // empty: ran; else what failed (a deadlock, a trap, a refused plan), and where
  std::vector<Bytes> outputs;   // by parameter: the out and inout buffers after the run; empty for others
  bool ok() const noexcept { return failure.empty(); }
};

// The launch a source runs with: the task's own (own_launch) or the plan it declares.
struct SourcePlan {
  LaunchPlan plan;
  bool own_launch = true;
  std::string error;  // a malformed plan line
};
SourcePlan plan_of(const TaskSpec& task, const std::string& source);

// Poisons the trial's out buffers (from poison_seed), runs every kernel of the plan in sequence
// under `schedule`, and returns the outputs. The trial itself is not changed.
KernelRun run_kernels(const cpu_runtime::Module& module, const SourcePlan& plan, const TaskSpec& task,
                      const Trial& trial, const cpu_runtime::Schedule& schedule, std::uint64_t poison_seed);

// Fills a buffer of `count` elements with the GPU runner's poison for its dtype.
void poison(DType dtype, std::uint64_t seed, Bytes& buffer);

}  // namespace leap::sandbox::verify
