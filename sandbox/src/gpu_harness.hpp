// SPDX-License-Identifier: Apache-2.0
// The worker's GPU side: runs, checks and times a candidate against the reference. Internal; runs
// only inside a worker process.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "leap/sandbox/worker.hpp"

namespace leap::sandbox::detail {

using StageFn = std::function<void(std::string_view)>;

// request: {"op": "eval", "task": <spec JSON text>, "candidate": <cubin bytes>, "reference": <cubin bytes>,
//           "seed": u64, "time": bool}
// reply:   {"ok": bool, "error": text (harness failure), "verdict": "correct" | "wrong_answer" | "runtime_error",
//           "cuda_error": name, "detail": text, "restart": bool, "timing": {...}, "device": name, "trials": n}
nlohmann::json gpu_eval(const nlohmann::json& request, const WorkerConfig& config, const StageFn& stage);

}  // namespace leap::sandbox::detail
