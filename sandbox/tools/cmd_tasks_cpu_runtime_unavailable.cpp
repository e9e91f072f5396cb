// SPDX-License-Identifier: Apache-2.0
// `tasks verify`, `tasks dump` and `tasks measure` in a build without the CPU runtime (Boost.Context was not found).
#include <iostream>

#include "cmd_tasks.hpp"

namespace leap_cli {
namespace {

int run_unavailable(const Arguments&) {
  std::cerr << "leap-sandbox: tasks verify, tasks dump and tasks measure need the CPU runtime for trusted CUDA, which "
               "this build "
               "lacks (apt-get install libboost-context-dev and reconfigure)\n";
  return 2;
}

}  // namespace

const TasksSubcommand tasks_verify_subcommand{"verify", "  tasks verify ...: not in this build (no CPU runtime)\n",
                                              run_unavailable};
const TasksSubcommand tasks_dump_subcommand{"dump", "  tasks dump ...: not in this build (no CPU runtime)\n",
                                            run_unavailable};
const TasksSubcommand tasks_measure_subcommand{"measure", "  tasks measure ...: not in this build (no CPU runtime)\n",
                                               run_unavailable};

}  // namespace leap_cli
