// SPDX-License-Identifier: Apache-2.0
// The evaluation protocol: runs, checks and times a candidate against the reference through a
// GpuDriver. Internal; runs inside a worker process (or, with the CPU fake, inside a test).
//
// A run is the candidate's whole launch plan: its kernels in order, its scratch poisoned before it.
// Correctness trials: for each size set and trial, fresh host-drawn inputs; the candidate runs first
// (nothing in memory holds this trial's answer yet), its guards and inputs are checked, then the
// reference runs and the outputs are compared on the host.
// Timing: the candidate's module is reloaded (its __device__ state is gone); warm-up by GPU time;
// then runs in pairs, candidate first: before each timed run, outside the timed window, inputs are
// drawn afresh on the device (one seed per pair, mixed with OS randomness) and outputs poisoned;
// after each pair, on the device, the candidate's outputs are compared with the reference's and its
// inputs with the reference's fresh copy, so every timed run answers for itself. Guards are checked
// after the last pair; a fastest run below the physical floor (timing_floor.hpp) is flagged unpaid.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "evaluation/gpu_driver.hpp"
#include "evaluation/worker.hpp"

namespace leap::sandbox::detail {

using StageFn = std::function<void(std::string_view)>;

// Warm-up before timing: at least this much GPU time per kernel (clocks ramp up, caches and TLBs
// settle), and at least TimingSettings::warmup launches.
constexpr double k_warmup_gpu_ms = 50.0;
// The harness plans to end by this fraction of the task's time limit, so timing never turns a
// correct kernel into a timeout: it stops early and reports fewer runs.
constexpr double k_time_limit_share = 0.8;

// request: {"op": "eval", "task": <spec JSON text>, "candidate": <module image bytes>,
//           "reference": <module image bytes>, "seed": u64, "time": bool,
//           "plan": the candidate's launch-plan directives (launch_plan.hpp; absent: the task's launch)}
// reply:   {"ok": bool, "error": text (harness failure), "verdict": "correct" | "wrong_answer" |
//           "runtime_error" | "compile_error" (the plan broke a rule, checked again here with the
//           device's limits, before any launch), "plan_error": text, "cuda_error": name, "detail":
//           text, "when_timed": bool (a timed run was wrong), "timed_run": n (which), "restart": bool,
//           "restart_reason": text, "device": name, "trials": n, "local_bytes_per_thread": the most
//           local memory of a candidate kernel, "timing": {..., "checked_runs": n, "floor": {...},
//           "below_floor": text (not paid), "matched_by_id" and "matched_by_window": the timed runs
//           (candidate's and reference's) whose CUPTI records were found by external id or by time window}}
nlohmann::json run_evaluation(const nlohmann::json& request, GpuDriver& driver, const StageFn& stage);

// The worker's entry: the real driver, opened once per worker process.
nlohmann::json gpu_eval(const nlohmann::json& request, const WorkerConfig& config, const StageFn& stage);

}  // namespace leap::sandbox::detail
