// SPDX-License-Identifier: Apache-2.0
// The runner protocol, the watchdog and kill-and-replace, with a fake runner (no CUDA): one that
// hangs, one that dies, and the evaluations after them.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <type_traits>
#include "compile/compiler_exit.hpp"
#include "evaluation/gpu_runner.hpp"
#include "leap/sandbox/compiler.hpp"
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace sb = leap::sandbox;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string cbor(const json& j) {
  const std::vector<std::uint8_t> b = json::to_cbor(j);
  return std::string(b.begin(), b.end());
}

sb::GpuRunner fake_runner() {
  sb::GpuRunnerConfig c;
  c.fake = true;
  return sb::GpuRunner(c);
}

json reply_of(const sb::CallResult& r) { return json::from_cbor(r.reply); }

// Waits until process `pid` (a child not yet reaped) has exited: a zombie, or gone. A fixed sleep is
// not enough: under ThreadSanitizer a runner's exit takes longer than 50 ms, and a request sent to a
// runner still on its way out is lost with it (a crash, as it should be), not answered.
bool exited_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const char state = sb::detail::process_state(pid);
    if (state == 0 || state == 'Z') return true;  // gone, or exited and not yet reaped
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE("GPU runner: answers requests and keeps one process across calls", "[sandbox][gpu_runner]") {
  sb::GpuRunner w = fake_runner();
  const sb::CallResult a = w.call(cbor({{"op", "ping"}}), 5000ms);
  REQUIRE(a.status == sb::CallStatus::ok);
  CHECK(reply_of(a).at("fake") == true);
  const int pid = reply_of(a).at("pid").get<int>();
  CHECK(pid == w.pid());
  const sb::CallResult b = w.call(cbor({{"op", "ping"}}), 5000ms);
  REQUIRE(b.status == sb::CallStatus::ok);
  CHECK(reply_of(b).at("pid").get<int>() == pid);
  CHECK(w.started() == 1);
  const sb::CallResult bad = w.call(cbor({{"op", "teleport"}}), 5000ms);
  REQUIRE(bad.status == sb::CallStatus::ok);
  CHECK(reply_of(bad).at("ok") == false);
  const sb::CallResult garbage = w.call("\xff\xfe not cbor", 5000ms);
  REQUIRE(garbage.status == sb::CallStatus::ok);
  CHECK(reply_of(garbage).at("ok") == false);
}

TEST_CASE("GPU runner: the watchdog kills a hanging runner and a fresh one serves the next call",
          "[sandbox][gpu_runner]") {
  sb::GpuRunner w = fake_runner();
  REQUIRE(w.call(cbor({{"op", "ping"}}), 5000ms).status == sb::CallStatus::ok);
  const int first = w.pid();
  const auto t0 = std::chrono::steady_clock::now();
  const sb::CallResult hung = w.call(cbor({{"op", "sleep"}, {"ms", 60000}}), 300ms);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(hung.status == sb::CallStatus::timeout);
  CHECK(hung.last_stage == "sleeping");
  CHECK_THAT(hung.detail, Catch::Contains("no answer within 300 ms"));
  CHECK(waited < 5.0);
  CHECK_FALSE(w.running());
  CHECK(::kill(first, 0) != 0);  // gone, and reaped
  const sb::CallResult next = w.call(cbor({{"op", "ping"}}), 5000ms);
  REQUIRE(next.status == sb::CallStatus::ok);
  CHECK(reply_of(next).at("pid").get<int>() != first);
  CHECK(w.started() == 2);
}

TEST_CASE("GPU runner: a runner that dies mid-request is reported and replaced", "[sandbox][gpu_runner]") {
  sb::GpuRunner w = fake_runner();
  const sb::CallResult dead = w.call(cbor({{"op", "crash"}}), 5000ms);
  CHECK(dead.status == sb::CallStatus::died);
  CHECK(dead.last_stage == "crashing");
  CHECK_THAT(dead.detail, Catch::Contains("SIGABRT"));
  for (int i = 0; i < 3; ++i) {
    const sb::CallResult ok = w.call(cbor({{"op", "ping"}}), 5000ms);
    REQUIRE(ok.status == sb::CallStatus::ok);
  }
  CHECK(w.started() == 2);
}

TEST_CASE("GPU runner: a runner killed while idle, one that exits, and restart_next are all replaced",
          "[sandbox][gpu_runner]") {
  sb::GpuRunner w = fake_runner();
  REQUIRE(w.call(cbor({{"op", "ping"}}), 5000ms).status == sb::CallStatus::ok);
  const pid_t killed = w.pid();
  ::kill(killed, SIGKILL);
  REQUIRE(exited_within(killed, 10s));
  REQUIRE(w.call(cbor({{"op", "ping"}}), 5000ms).status == sb::CallStatus::ok);
  CHECK(w.started() == 2);
  const pid_t exiting = w.pid();
  REQUIRE(w.call(cbor({{"op", "exit"}}), 5000ms).status == sb::CallStatus::ok);
  REQUIRE(exited_within(exiting, 10s));
  REQUIRE(w.call(cbor({{"op", "ping"}}), 5000ms).status == sb::CallStatus::ok);
  CHECK(w.started() == 3);
  w.restart_next();
  REQUIRE(w.call(cbor({{"op", "ping"}}), 5000ms).status == sb::CallStatus::ok);
  CHECK(w.started() == 4);
  w.stop();
  CHECK_FALSE(w.running());
}

TEST_CASE("GPU runner: a real runner on the stub driver fails to initialise without hurting the parent",
          "[sandbox][gpu_runner]") {
  if (std::string(LEAP_TEST_STUB_LIBCUDA).empty()) return;
  sb::GpuRunnerConfig c;
  c.driver_library = LEAP_TEST_STUB_LIBCUDA;
  sb::GpuRunner w(c);
  const sb::CallResult r = w.call(cbor({{"op", "eval"}, {"task", "{}"}}), 10000ms);
  REQUIRE(r.status == sb::CallStatus::ok);
  const json j = reply_of(r);
  CHECK(j.at("ok") == false);
  CHECK_THAT(j.at("error").get<std::string>(),
             Catch::Contains("GPU initialisation failed") && Catch::Contains("cuInit"));
  CHECK(j.at("restart") == true);
}

TEST_CASE("GPU runner: the runner program gets the operator's pageable-memory and local-memory settings",
          "[sandbox][gpu_runner]") {
  // Both rules are applied in the runner (runner_rules.hpp); a setting lost on the way to it would
  // leave the refusal or the restart to the default silently.
  sb::GpuRunnerConfig c;
  c.fake = true;
  const json defaults = reply_of(sb::GpuRunner(c).call(cbor({{"op", "ping"}}), 5000ms));
  CHECK(defaults.at("allow_pageable_host_access") == false);
  CHECK(defaults.at("local_memory_restart_bytes") == sb::GpuRunnerConfig{}.local_memory_restart_bytes);
  c.allow_pageable_host_access = true;
  c.local_memory_restart_bytes = 12345;
  sb::GpuRunner w(c);
  const sb::CallResult r = w.call(cbor({{"op", "ping"}}), 5000ms);
  REQUIRE(r.status == sb::CallStatus::ok);
  CHECK(reply_of(r).at("allow_pageable_host_access") == true);
  CHECK(reply_of(r).at("local_memory_restart_bytes") == 12345);
}

TEST_CASE("GPU runner: the 0.1 names still work until 0.3: WorkerConfig, Isolation::worker_pool, $LEAP_SANDBOX_WORKER",
          "[sandbox][gpu_runner]") {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  static_assert(std::is_same_v<sb::WorkerConfig, sb::GpuRunnerConfig>);
  static_assert(sb::Isolation::worker_pool == sb::Isolation::pooled);
#pragma GCC diagnostic pop
  const std::string built = sb::find_gpu_runner_executable();
  REQUIRE_FALSE(built.empty());
  const char* had_new = std::getenv("LEAP_SANDBOX_GPU_RUNNER");
  const std::string saved_new = had_new ? had_new : "";
  ::unsetenv("LEAP_SANDBOX_GPU_RUNNER");
  // The old variable is read when the new one is not set; the new one wins when both are.
  const std::string copy =
      (std::filesystem::temp_directory_path() / ("leap-runner-copy-" + std::to_string(::getpid()))).string();
  std::filesystem::copy_file(built, copy, std::filesystem::copy_options::overwrite_existing);
  ::setenv("LEAP_SANDBOX_WORKER", copy.c_str(), 1);
  CHECK(sb::find_gpu_runner_executable() == copy);
  ::setenv("LEAP_SANDBOX_GPU_RUNNER", built.c_str(), 1);
  CHECK(sb::find_gpu_runner_executable() == built);
  ::unsetenv("LEAP_SANDBOX_WORKER");
  if (had_new) ::setenv("LEAP_SANDBOX_GPU_RUNNER", saved_new.c_str(), 1);
  else ::unsetenv("LEAP_SANDBOX_GPU_RUNNER");
  std::filesystem::remove(copy);
}
