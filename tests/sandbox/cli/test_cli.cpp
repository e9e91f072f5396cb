// SPDX-License-Identifier: Apache-2.0
// The built leap-sandbox program, run as a user would: exit codes, JSON lines, help, progress.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"

using leap_test::json_lines;
using leap_test::run_cli;
using nlohmann::json;
using Run = leap_test::CliRun;

TEST_CASE("cli: --help documents every option, --version names the versions", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const Run h = run_cli("--help", dir);
  CHECK(h.exit_code == 0);
  for (const char* opt : {"info", "compile", "--json", "--arch", "--timeout-ms", "--cache-dir", "--no-cache", "-j N",
                          "--version", "Exit status"}) {
    CHECK(h.out.find(opt) != std::string::npos);
  }
  const Run v = run_cli("--version", dir);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("NVRTC") != std::string::npos);
  CHECK(v.out.find("CUPTI") != std::string::npos);
}

TEST_CASE("cli: info --json reports versions, archs and the GPU status", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const Run r = run_cli("info --json", dir);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("nvrtc_version").get<std::string>().find('.') != std::string::npos);
  CHECK(j.at("cupti_api_version").get<unsigned>() > 0);
  CHECK_FALSE(j.at("supported_archs").empty());
  const std::string status = j.at("gpu").at("status");
  CHECK((status == "available" || status == "no driver" || status == "stub driver" || status == "no device"));
  if (status != "available") CHECK_FALSE(j.at("gpu").at("reason").get<std::string>().empty());
  // The compile workers serve and the fleet members use, and NVRTC's PCH heap each one reserves.
  CHECK(j.at("compile_pool").at("pch") == true);
  CHECK(j.at("compile_pool").at("max_compiles_per_process").get<unsigned>() > 0);
  CHECK(j.at("compile_pool").at("nvrtc_pch_heap_bytes").get<std::uint64_t>() > 0);
  const Run text = run_cli("info", dir);
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("GPU: ") != std::string::npos);
  CHECK(text.out.find("pooled compilers (serve, fleet-member)") != std::string::npos);
}

TEST_CASE("cli: the fleet member's 0.1 command, worker, still runs it and says it is deprecated", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const Run now = run_cli("fleet-member --help", dir);
  const Run old = run_cli("worker --help", dir);
  REQUIRE(now.exit_code == 0);
  REQUIRE(old.exit_code == 0);
  CHECK(now.out.find("leap-sandbox fleet-member [--redis URL]") != std::string::npos);
  CHECK(old.out == now.out);  // the same command, the same help
  CHECK(now.err.find("deprecated") == std::string::npos);
  CHECK(old.err.find("'worker' is deprecated and goes in 0.3; use 'fleet-member'") != std::string::npos);
}

TEST_CASE("cli: info says which timer times kernels and why, LEAP_SANDBOX_TIMER=events switches CUPTI off",
          "[sandbox][cli]") {
  leap_test::TempDir dir;
  const char* old = std::getenv("LEAP_SANDBOX_TIMER");
  const std::string saved = old != nullptr ? old : "";
  ::unsetenv("LEAP_SANDBOX_TIMER");
  const json cupti = json::parse(run_cli("info --json", dir).out);
  CHECK(cupti.at("timer").at("method") == "cupti");
  CHECK(cupti.at("timer").at("reason").get<std::string>().find("external correlation") != std::string::npos);
  ::setenv("LEAP_SANDBOX_TIMER", "events", 1);
  const json events = json::parse(run_cli("info --json", dir).out);
  const Run text = run_cli("info", dir);
  if (old != nullptr) ::setenv("LEAP_SANDBOX_TIMER", saved.c_str(), 1);
  else ::unsetenv("LEAP_SANDBOX_TIMER");
  CHECK(events.at("timer").at("method") == "events");
  CHECK(text.out.find("timer: events (LEAP_SANDBOX_TIMER=events") != std::string::npos);
}

TEST_CASE("cli: compile exit codes and JSON lines", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const std::string good = dir.write("good.cu", leap_test::plain_kernel()).string();
  const std::string bad = dir.write("bad.cu", "__global__ void k() {\n  nope;\n}\n").string();
  const std::string evil = dir.write("evil.cu", "#include \"/etc/passwd\"\n").string();

  const Run ok = run_cli("compile --json --no-cache '" + good + "'", dir);
  CHECK(ok.exit_code == 0);
  auto lines = json_lines(ok.out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].at("file") == good);
  CHECK(lines[0].at("status") == "ok");
  CHECK(lines[0].at("cache_hit") == false);
  CHECK(lines[0].at("seconds").get<double>() > 0.0);
  CHECK(lines[0].at("log").is_string());
  CHECK(lines[0].at("cubin_bytes").get<std::size_t>() > 0);

  const Run mixed = run_cli("compile --json --no-cache -j 2 '" + good + "' '" + bad + "' '" + evil + "'", dir);
  CHECK(mixed.exit_code == 1);
  lines = json_lines(mixed.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].at("status") == "ok");
  CHECK(lines[1].at("status") == "error");
  CHECK(lines[1].at("log").get<std::string>().find("(2): error") != std::string::npos);
  CHECK(lines[2].at("status") == "refused");
  CHECK(lines[2].at("log").get<std::string>().find("root:") == std::string::npos);

  CHECK(run_cli("compile --no-cache '" + (dir.path / "missing.cu").string() + "'", dir).exit_code == 2);
  CHECK(run_cli("compile --frobnicate '" + good + "'", dir).exit_code == 2);
  CHECK(run_cli("compile --arch sm_1 '" + good + "'", dir).exit_code == 2);
  CHECK(run_cli("compile --timeout-ms abc '" + good + "'", dir).exit_code == 2);
  CHECK(run_cli("compile --no-cache --cache-dir x '" + good + "'", dir).exit_code == 2);
  CHECK(run_cli("compile", dir).exit_code == 2);
  CHECK(run_cli("frobnicate", dir).exit_code == 2);
  CHECK(run_cli("", dir).exit_code == 2);

  const Run text = run_cli("compile --no-cache '" + bad + "'", dir);
  CHECK(text.exit_code == 1);
  CHECK(text.out.find("error") != std::string::npos);
}

TEST_CASE("cli: the disk cache answers a second process, many files show progress", "[sandbox][cli]") {
  leap_test::TempDir dir;
  std::string files;
  for (int i = 0; i < 6; ++i) {
    files += " '" +
             dir.write("k" + std::to_string(i) + ".cu",
                       std::string(leap_test::plain_kernel()) + "// " + std::to_string(i) + "\n")
                 .string() +
             "'";
  }
  const std::string cache = (dir.path / "cache").string();
  const Run first = run_cli("compile --json --cache-dir '" + cache + "'" + files, dir);
  REQUIRE(first.exit_code == 0);
  for (const json& j : json_lines(first.out)) CHECK(j.at("cache_hit") == false);
  CHECK(first.err.find("6/6") != std::string::npos);
  const Run second = run_cli("compile --json --quiet --cache-dir '" + cache + "'" + files, dir);
  REQUIRE(second.exit_code == 0);
  const auto lines = json_lines(second.out);
  REQUIRE(lines.size() == 6);
  for (const json& j : lines) CHECK(j.at("cache_hit") == true);
  CHECK(second.err.empty());
}
