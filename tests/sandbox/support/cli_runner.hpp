// SPDX-License-Identifier: Apache-2.0
// Running the built leap-sandbox program from a test, as a user would.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

// GCC 12 reports a false -Wrestrict on "literal" + std::string (GCC bug 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace leap_test {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the CLI with `input` on stdin. Its default cache directory points into `dir`, so tests never
// touch the user's cache.
inline CliRun run_cli(const std::string& args, const TempDir& dir, const std::string& input = "") {
  const std::string in_file = dir.write("stdin.txt", input).string();
  const std::string err_file = (dir.path / "stderr.txt").string();
  const std::string cmd = "LEAP_SANDBOX_CACHE_DIR='" + (dir.path / "cache").string() + "' '" + LEAP_SANDBOX_CLI + "' " +
                          args + " <'" + in_file + "' 2>'" + err_file + "'";
  CliRun run;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = read_file(err_file);
  return run;
}

// One JSON document per line of `out`.
inline std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

}  // namespace leap_test
