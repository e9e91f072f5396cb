// SPDX-License-Identifier: Apache-2.0
// The worker protocol, the watchdog and kill-and-replace, with a fake worker (no CUDA): one that
// hangs, one that dies, and the evaluations after them.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include "compile/compiler_exit.hpp"
#include "evaluation/worker.hpp"
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

sb::WorkerProcess fake_worker() {
  sb::WorkerConfig c;
  c.fake = true;
  return sb::WorkerProcess(c);
}

json reply_of(const sb::CallResult& r) { return json::from_cbor(r.reply); }

// Waits until process `pid` (a child not yet reaped) has exited: a zombie, or gone. A fixed sleep is
// not enough: under ThreadSanitizer a worker's exit takes longer than 50 ms, and a request sent to a
// worker still on its way out is lost with it (a crash, as it should be), not answered.
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

TEST_CASE("worker: answers requests and keeps one process across calls", "[sandbox][worker]") {
  sb::WorkerProcess w = fake_worker();
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

TEST_CASE("worker: the watchdog kills a hanging worker and a fresh one serves the next call", "[sandbox][worker]") {
  sb::WorkerProcess w = fake_worker();
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

TEST_CASE("worker: a worker that dies mid-request is reported and replaced", "[sandbox][worker]") {
  sb::WorkerProcess w = fake_worker();
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

TEST_CASE("worker: a worker killed while idle, one that exits, and restart_next are all replaced",
          "[sandbox][worker]") {
  sb::WorkerProcess w = fake_worker();
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

TEST_CASE("worker: a real worker on the stub driver fails to initialise without hurting the parent",
          "[sandbox][worker]") {
  if (std::string(LEAP_TEST_STUB_LIBCUDA).empty()) return;
  sb::WorkerConfig c;
  c.driver_library = LEAP_TEST_STUB_LIBCUDA;
  sb::WorkerProcess w(c);
  const sb::CallResult r = w.call(cbor({{"op", "eval"}, {"task", "{}"}}), 10000ms);
  REQUIRE(r.status == sb::CallStatus::ok);
  const json j = reply_of(r);
  CHECK(j.at("ok") == false);
  CHECK_THAT(j.at("error").get<std::string>(),
             Catch::Contains("GPU initialisation failed") && Catch::Contains("cuInit"));
  CHECK(j.at("restart") == true);
}

TEST_CASE("worker: the worker program gets the operator's pageable-memory and local-memory settings",
          "[sandbox][worker]") {
  // Both rules are applied in the worker (worker_rules.hpp); a setting lost on the way to it would
  // leave the refusal or the restart to the default silently.
  sb::WorkerConfig c;
  c.fake = true;
  const json defaults = reply_of(sb::WorkerProcess(c).call(cbor({{"op", "ping"}}), 5000ms));
  CHECK(defaults.at("allow_pageable_host_access") == false);
  CHECK(defaults.at("local_memory_restart_bytes") == sb::WorkerConfig{}.local_memory_restart_bytes);
  c.allow_pageable_host_access = true;
  c.local_memory_restart_bytes = 12345;
  sb::WorkerProcess w(c);
  const sb::CallResult r = w.call(cbor({{"op", "ping"}}), 5000ms);
  REQUIRE(r.status == sb::CallStatus::ok);
  CHECK(reply_of(r).at("allow_pageable_host_access") == true);
  CHECK(reply_of(r).at("local_memory_restart_bytes") == 12345);
}
