// SPDX-License-Identifier: Apache-2.0
// What the evaluation worker decides around one evaluation, given its configuration and the device:
// it refuses to evaluate where device code can reach pageable host memory (unless the operator
// allowed it), and asks to be replaced after a candidate whose local memory grew the context's
// reservation past WorkerConfig::local_memory_restart_bytes. Defined in worker_loop.cpp. Internal.
#pragma once

#include "evaluation/gpu_driver.hpp"
#include "evaluation/gpu_harness.hpp"
#include "evaluation/worker.hpp"

namespace leap::sandbox::detail {

// run_evaluation under the rules above: its reply, or the refusal (ok false, no restart).
EvaluationReply evaluate_under_worker_rules(const EvaluationRequest& request, GpuDriver& driver,
                                            const WorkerConfig& config, const StageFn& stage);

}  // namespace leap::sandbox::detail
