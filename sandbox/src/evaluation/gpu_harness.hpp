// SPDX-License-Identifier: Apache-2.0
// The evaluation protocol: runs, checks and times a candidate against the reference through a
// GpuDriver. Internal; runs inside a runner process (or, with the CPU fake, inside a test).
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
#include "evaluation/gpu_runner.hpp"
#include "runner_pipe/evaluation_reply.hpp"
#include "runner_pipe/evaluation_request.hpp"

namespace leap::sandbox::detail {

using StageFn = std::function<void(std::string_view)>;

// Warm-up before timing: at least this much GPU time per kernel (clocks ramp up, caches and TLBs
// settle), and at least TimingSettings::warmup launches.
constexpr double k_warmup_gpu_ms = 50.0;
// The harness plans to end by this fraction of the task's time limit, so timing never turns a
// correct kernel into a timeout: it stops early and reports fewer runs.
constexpr double k_time_limit_share = 0.8;

// The request and the reply are runner_pipe/evaluation_request.hpp's and runner_pipe/evaluation_reply.hpp's.
// A plan that breaks a rule, checked again here with the device's limits before any launch, is a
// compile_error verdict with its plan_error.
EvaluationReply run_evaluation(const EvaluationRequest& request, GpuDriver& driver, const StageFn& stage);

// The runner's entry: the real driver, opened once per runner process. The request is decoded only
// once the driver is up, so a runner that cannot open the GPU says so whatever it was sent.
EvaluationReply gpu_eval(const nlohmann::json& request, const GpuRunnerConfig& config, const StageFn& stage);

}  // namespace leap::sandbox::detail
