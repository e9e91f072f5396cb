// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "bounded_json.hpp"
#include "confinement.hpp"
#include "detail.hpp"
#include "frames.hpp"
#include "gpu_harness.hpp"
#include "leap/sandbox/worker.hpp"

namespace leap::sandbox {

int run_worker(int in_fd, int out_fd, const WorkerConfig& config) {
  using nlohmann::json;
  const detail::StageFn stage = [&](std::string_view s) {
    if (!detail::write_frame(out_fd, 'S', s)) _exit(3);
  };
  if (config.fake && config.confine) detail::confine_worker();  // no driver to initialise first
  auto confinement = [] {
    const detail::WorkerConfinement& c = detail::worker_confinement();
    return json{{"landlock_abi", c.landlock_abi}, {"seccomp", c.seccomp}, {"error", c.error}};
  };
  for (;;) {
    char kind = 0;
    std::string payload;
    const detail::ReadStatus s = detail::read_frame(in_fd, kind, payload);
    if (s == detail::ReadStatus::eof) return 0;
    if (s != detail::ReadStatus::ok || kind != 'Q') return 2;
    json reply;
    bool exit_after = false;
    try {
      const json req = detail::decode_bounded_cbor(payload, detail::k_frame_limits);
      const std::string op = req.value("op", "");
      if (op == "ping") {
        reply = {{"ok", true}, {"pid", ::getpid()}, {"fake", config.fake}, {"confinement", confinement()}};
      } else if (op == "probe") {  // the GPU as probe_gpu reports it; loads the driver in this worker
        reply = {{"ok", true}, {"report", config.fake ? std::string("state no_driver\nreason a fake worker has no driver\n")
                                                     : detail::probe_driver_here(config.driver_library)},
                 {"confinement", confinement()}};
      } else if (op == "sleep") {  // test operation: a worker that hangs
        stage("sleeping");
        std::this_thread::sleep_for(std::chrono::milliseconds(req.value("ms", 0)));
        reply = {{"ok", true}};
      } else if (op == "crash") {  // test operation: a worker that dies mid-request
        stage("crashing");
        std::abort();
      } else if (op == "exit") {
        reply = {{"ok", true}};
        exit_after = true;
      } else if (op == "eval") {
        if (config.fake) {
          reply = {{"ok", false}, {"error", "this is a fake worker without CUDA"}};
        } else {
          reply = detail::gpu_eval(req, config, stage);
          exit_after = reply.value("restart", false);
        }
      } else {
        reply = {{"ok", false}, {"error", "unknown op '" + op + "'"}};
      }
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"error", std::string("worker: ") + e.what()}};
    }
    const std::vector<std::uint8_t> bytes = json::to_cbor(reply);
    if (!detail::write_frame(out_fd, 'R', std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()))) return 3;
    if (exit_after) return 0;  // a poisoned CUDA context: the parent starts a fresh worker next time
  }
}

}  // namespace leap::sandbox
