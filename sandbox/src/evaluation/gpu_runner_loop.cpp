// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "common/bounded_json.hpp"
#include "confinement/confinement.hpp"
#include "evaluation/driver_probe.hpp"
#include "runner_pipe/frames.hpp"
#include "runner_pipe/runner_stages.hpp"
#include "runner_pipe/runner_control.hpp"
#include "evaluation/gpu_harness.hpp"
#include "evaluation/gpu_runner.hpp"
#include "evaluation/runner_rules.hpp"

namespace leap::sandbox {

namespace detail {

EvaluationReply evaluate_under_runner_rules(const EvaluationRequest& request, GpuDriver& driver,
                                            const GpuRunnerConfig& config, const StageFn& stage) {
  // Such a device's kernels can read and write this process's own memory: its stack, the host copies
  // of inputs and outputs. Nothing the harness checks would see it.
  if (driver.reads_pageable_host_memory() && !config.allow_pageable_host_access) {
    EvaluationReply refusal;
    refusal.error = "refused: device code on " + driver.device_name() +
                    " can read and write pageable host memory (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 1), so a "
                    "kernel could reach the runner's stack and its host copies of inputs and outputs; an operator "
                    "who accepts that sets GpuRunnerConfig::allow_pageable_host_access (leap-sandbox-gpu-runner "
                    "--allow-pageable-host-access)";
    return refusal;
  }
  EvaluationReply reply = run_evaluation(request, driver, stage);
  // The driver grows the context's local memory to fit the largest kernel and keeps it: past the
  // threshold, the next evaluation gets a fresh runner rather than a device with that much less memory.
  const std::size_t local = reply.local_bytes_per_thread;
  if (local > config.local_memory_restart_bytes) {
    reply.restart = true;
    reply.restart_reason = "a kernel used " + std::to_string(local) + " bytes of local memory per thread (over " +
                           std::to_string(config.local_memory_restart_bytes) + "), which the driver keeps reserved";
  }
  return reply;
}

}  // namespace detail

int run_gpu_runner(int in_fd, int out_fd, const GpuRunnerConfig& config) {
  using nlohmann::json;
  const detail::StageFn stage = [&](std::string_view s) {
    if (!detail::write_frame(out_fd, detail::FrameKind::stage, s)) _exit(3);
  };
  if (config.fake && config.confine) detail::confine_gpu_runner();  // no driver to initialise first
  auto confinement = [] {
    const detail::GpuRunnerConfinement& c = detail::gpu_runner_confinement();
    return detail::ConfinementReport{c.landlock_abi, c.seccomp, c.error};
  };
  for (;;) {
    detail::FrameKind kind{};
    std::string payload;
    const detail::ReadStatus s = detail::read_frame(in_fd, kind, payload);
    if (s == detail::ReadStatus::eof) return 0;
    if (s != detail::ReadStatus::ok || kind != detail::FrameKind::request) return 2;
    json reply;
    bool exit_after = false;
    try {
      const json req = detail::decode_bounded_cbor(payload, detail::k_frame_limits);
      std::string name;
      const std::optional<detail::RunnerOp> op = detail::runner_op_of(req, name);
      if (!op) {
        reply = detail::runner_failure("unknown op '" + name + "'");
      } else {
        switch (*op) {
          case detail::RunnerOp::ping:
            reply = detail::to_json(detail::PingReply{::getpid(), config.fake, confinement(),
                                                      config.allow_pageable_host_access,
                                                      config.local_memory_restart_bytes});
            break;
          case detail::RunnerOp::probe:  // the GPU as probe_gpu reports it; loads the driver in this runner
            reply =
                detail::probe_reply(config.fake ? std::string("state no_driver\nreason a fake runner has no driver\n")
                                                : detail::probe_driver_here(config.driver_library),
                                    confinement());
            break;
          case detail::RunnerOp::sleep:  // test operation: a runner that hangs
            stage(detail::stage::sleeping);
            std::this_thread::sleep_for(std::chrono::milliseconds(detail::sleep_ms_of(req)));
            reply = detail::runner_success();
            break;
          case detail::RunnerOp::crash:  // test operation: a runner that dies mid-request
            stage(detail::stage::crashing);
            std::abort();
          case detail::RunnerOp::exit:
            reply = detail::runner_success();
            exit_after = true;
            break;
          case detail::RunnerOp::eval: {
            detail::EvaluationReply eval;
            if (config.fake) {
              eval.error = "this is a fake runner without CUDA";
            } else {
              eval = detail::gpu_eval(req, config, stage);
              exit_after = eval.restart;
            }
            reply = detail::to_json(eval);
            break;
          }
        }
      }
    } catch (const std::exception& e) {
      reply = detail::runner_failure(std::string("runner: ") + e.what());
    }
    const std::vector<std::uint8_t> bytes = json::to_cbor(reply);
    if (!detail::write_frame(out_fd, detail::FrameKind::reply,
                             std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())))
      return 3;
    if (exit_after) return 0;  // a poisoned CUDA context: the parent starts a fresh runner next time
  }
}

}  // namespace leap::sandbox
