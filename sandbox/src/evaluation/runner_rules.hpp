// SPDX-License-Identifier: Apache-2.0
// What the GPU runner decides around one evaluation, given its configuration and the device:
// it refuses to evaluate where device code can reach pageable host memory (unless the operator
// allowed it), and asks to be replaced after a candidate whose local memory grew the context's
// reservation past GpuRunnerConfig::local_memory_restart_bytes. Defined in gpu_runner_loop.cpp. Internal.
#pragma once

#include "evaluation/gpu_driver.hpp"
#include "evaluation/gpu_harness.hpp"
#include "evaluation/gpu_runner.hpp"

namespace leap::sandbox::detail {

// run_evaluation under the rules above: its reply, or the refusal (ok false, no restart).
EvaluationReply evaluate_under_runner_rules(const EvaluationRequest& request, GpuDriver& driver,
                                            const GpuRunnerConfig& config, const StageFn& stage);

}  // namespace leap::sandbox::detail
