// SPDX-License-Identifier: Apache-2.0
// leap-sandbox tasks: the built-in tasks and their variants.
#include <iostream>
#include <nlohmann/json.hpp>

#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/task.hpp>

#include "cli.hpp"
#include "cmd_tasks.hpp"
#include "common/shortened.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;
using nlohmann::json;

json task_json(const sb::BuiltinTask& t) {
  json j = json::parse(sb::task_to_json(t.spec));
  json variants = json::array();
  for (const sb::TaskVariant& v : t.variants) variants.push_back({{"name", v.name}, {"expect", v.expect}});
  j["variants"] = variants;
  return j;
}

int run_tasks(const Arguments& args) {
  if (!args.empty() && args[0] == tasks_verify_subcommand.name)
    return tasks_verify_subcommand.run(Arguments(args.begin() + 1, args.end()));
  bool as_json = false;
  for (const std::string& a : args) {
    if (a == "--json") as_json = true;
    else usage_error("tasks: unknown option '" + a + "'");
  }
  // A built-in task that breaks a rule is left out of the library; say which and why, once.
  for (const sb::BuiltinTaskError& e : sb::builtin_task_errors())
    std::cerr << "leap-sandbox: built-in task '" << e.task << "' left out: " << e.message << "\n";
  if (as_json) {
    json all = json::array();
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) all.push_back(task_json(t));
    std::cout << all.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    const sb::LaunchPolicy& pol = t.spec.candidate_launch;
    std::cout << t.spec.name << " (kernel " << t.spec.entry << "; launch ";
    if (pol.allowed) {
      std::cout << "plans allowed: up to " << pol.max_kernels << " kernels, " << pol.max_threads_per_block
                << " threads per block, " << pol.max_shared_bytes / 1024 << " KiB shared, "
                << (pol.max_scratch_bytes >> 20) << " MiB scratch";
    } else {
      std::cout << "fixed";
    }
    std::cout << "; variants:";
    for (const sb::TaskVariant& v : t.variants) std::cout << " " << v.name;
    const std::string d = sb::detail::shortened(t.spec.description, 160, 157);
    std::cout << ")\n  " << d << "\n";
  }
  return 0;
}

}  // namespace

const Command tasks_command{
    "tasks", "tasks [--json] | tasks verify [NAME | SPEC.json ...] [options]",
    R"(  Lists the built-in tasks with their launch policy (fixed, or the bounds of the launch plans a
  candidate may declare) and their variants (reference, fast, wrong, broken).
  --json               a JSON array: each task's full spec (library fields and reference source included)
                       and its variants
  A built-in task that breaks a rule is left out, with its error on stderr.

  tasks verify [NAME | SPEC.json ...] [--builtin-rules] [--json] [--brief] [-j N] [--cache-dir DIR]
               [--seed S] [--random-schedules N] [-O0|-O1|-O2] [--no-negatives] [--no-variants] [--no-degeneracy]
  Checks tasks on the CPU, without a GPU (docs/tasks.md): each reference on the CPU runtime under
  every schedule against its oracle at every check size and a reduced timing size, the negatives,
  the shipped variants' verdicts and degeneracy; each task in a child process. Exit 0 when all pass.
)",
    run_tasks};

}  // namespace leap_cli
