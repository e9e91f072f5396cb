// SPDX-License-Identifier: Apache-2.0
// The run switches (run_switches.hpp): one parser for every program that evaluates kernels, and the
// CLI's eval and serve taking them through it. The GPU suite, bench_timing and sandbox_loop are
// checked to take them by CTest runs of the programs themselves (their CMakeLists.txt).
#include <catch2/catch.hpp>
#include <leap/sandbox/run_switches.hpp>
#include <string>
#include <vector>

#include <leap/sandbox/builtin_tasks.hpp>

#include "cli_runner.hpp"

namespace sb = leap::sandbox;

TEST_CASE("run switches: each spelling sets its own switch, and nothing else is taken", "[sandbox][cli]") {
  struct Case {
    const char* arg;
    bool sb::RunSwitches::*field;
  };
  const Case cases[] = {{"--unconfined", &sb::RunSwitches::unconfined},
                        {"--accept-weaker-confinement", &sb::RunSwitches::accept_weaker_confinement},
                        {"--allow-pageable-host-access", &sb::RunSwitches::allow_pageable_host_access}};
  for (const Case& c : cases) {
    sb::RunSwitches s;
    REQUIRE(s.parse(c.arg));
    for (const Case& other : cases) CHECK(s.*(other.field) == (other.field == c.field));
    CHECK(s.arguments() == std::vector<std::string>{c.arg});
    CHECK(s.describe() == c.arg);
  }
  sb::RunSwitches none;
  for (const char* other : {"--unconfined=1", "-unconfined", "--allow-pageable", "--json", "", "unconfined"})
    CHECK_FALSE(none.parse(other));
  CHECK(none.arguments().empty());
  CHECK(none.describe() == "none");
}

TEST_CASE("run switches: taken out of an argument list in place, and applied to the evaluator's config",
          "[sandbox][cli]") {
  sb::RunSwitches s;
  const std::vector<std::string> rest =
      take_run_switches({"--steps", "1", "--allow-pageable-host-access", "TASK", "--accept-weaker-confinement"}, s);
  CHECK(rest == std::vector<std::string>{"--steps", "1", "TASK"});
  CHECK(s.allow_pageable_host_access);
  CHECK(s.accept_weaker_confinement);
  CHECK_FALSE(s.unconfined);
  CHECK(s.describe() == "--accept-weaker-confinement, --allow-pageable-host-access");

  sb::EvaluatorConfig config;
  REQUIRE_FALSE(config.gpu_runner.allow_pageable_host_access);
  s.apply(config);
  CHECK(config.gpu_runner.allow_pageable_host_access);
  CHECK(config.compiler.accept_weaker_confinement);
  CHECK_FALSE(config.compiler.unconfined);
  // An unset switch never turns a setting off.
  sb::EvaluatorConfig on;
  on.compiler.unconfined = true;
  sb::RunSwitches{}.apply(on);
  CHECK(on.compiler.unconfined);
  CHECK(std::string(sb::run_switches_help()).find("--allow-pageable-host-access") != std::string::npos);
}

TEST_CASE("run switches: leap-sandbox eval and serve take all three", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const std::string broken =
      dir.write("broken.cu", sb::find_builtin_task("row_sum")->variant("broken")->source).string();
  const leap_test::CliRun eval = leap_test::run_cli(
      "eval --json --accept-weaker-confinement --allow-pageable-host-access --unconfined row_sum '" + broken + "'",
      dir);
  INFO(eval.err);
  CHECK(eval.exit_code == 0);
  CHECK(nlohmann::json::parse(eval.out).at("verdict") == "compile_error");
  const leap_test::CliRun serve =
      leap_test::run_cli("serve --accept-weaker-confinement --allow-pageable-host-access --unconfined", dir,
                         "{\"id\": 1, \"op\": \"info\"}\n");
  INFO(serve.err);
  CHECK(serve.exit_code == 0);
  CHECK(nlohmann::json::parse(serve.out).at("ok") == true);
  const leap_test::CliRun bad = leap_test::run_cli("eval --allow-pageable row_sum '" + broken + "'", dir);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown option '--allow-pageable'"));
}
