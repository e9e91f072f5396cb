// SPDX-License-Identifier: Apache-2.0
// The subcommands of `leap-sandbox tasks` that live in files of their own (verify, dump, measure).
#pragma once

#include <string>
#include <string_view>

#include "cli.hpp"

namespace leap_cli {

struct TasksSubcommand {
  std::string_view name;
  std::string_view help;  // usage and what it does, indented for --help
  int (*run)(const Arguments& args);
};

// `tasks verify`, `tasks dump` and `tasks measure`: they need the verifier, built with the CPU runtime;
// without it (no Boost.Context), stubs that say so (cmd_tasks_cpu_runtime_unavailable.cpp).
extern const TasksSubcommand tasks_verify_subcommand;
extern const TasksSubcommand tasks_dump_subcommand;
extern const TasksSubcommand tasks_measure_subcommand;

// Where verify and dump keep their compiled modules without --cache-dir: $LEAP_VERIFY_CACHE_DIR, else
// verify/ in the sandbox's cache directory, else /tmp/leap-verify-<uid> (cmd_tasks_verify.cpp).
std::string default_verify_cache_dir();

}  // namespace leap_cli
