// SPDX-License-Identifier: Apache-2.0
// leap-sandbox tasks: the built-in tasks and their variants.
#include <algorithm>
#include <array>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/task.hpp>
#include <leap/sandbox/task_library.hpp>

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

// Which tasks `tasks` lists: every given filter must match (none given: all of them).
struct TaskFilter {
  std::optional<std::string> category;
  std::optional<int> tier;
  std::optional<std::string> split;

  bool admits(const sb::BuiltinTask& t) const {
    const sb::TaskLibraryInfo& l = t.spec.library;
    return (!category || l.category == *category) && (!tier || l.tier == *tier) && (!split || l.split == *split);
  }
};

template <std::size_t N>
std::string one_of(const std::string& option, const std::string& value,
                   const std::array<std::string_view, N>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  usage_error(option + ": unknown value '" + value + "' (one of " + list + ")");
}

int run_tasks(const Arguments& args) {
  if (!args.empty() && args[0] == tasks_verify_subcommand.name)
    return tasks_verify_subcommand.run(Arguments(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == tasks_dump_subcommand.name)
    return tasks_dump_subcommand.run(Arguments(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == tasks_measure_subcommand.name)
    return tasks_measure_subcommand.run(Arguments(args.begin() + 1, args.end()));
  bool as_json = false;
  TaskFilter filter;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") as_json = true;
    else if (a == "--category") filter.category = one_of(a, option_value(args, i), sb::k_task_categories);
    else if (a == "--tier") filter.tier = static_cast<int>(parse_number(a, option_value(args, i), 1, 3));
    else if (a == "--split") filter.split = one_of(a, option_value(args, i), sb::k_task_splits);
    else usage_error("tasks: unknown option '" + a + "'");
  }
  std::vector<const sb::BuiltinTask*> chosen;
  for (const sb::BuiltinTask& t : sb::builtin_tasks())
    if (filter.admits(t)) chosen.push_back(&t);
  // A built-in task that breaks a rule is left out of the library; say which and why, once.
  for (const sb::BuiltinTaskError& e : sb::builtin_task_errors())
    std::cerr << "leap-sandbox: built-in task '" << e.task << "' left out: " << e.message << "\n";
  if (as_json) {
    json all = json::array();
    for (const sb::BuiltinTask* t : chosen) all.push_back(task_json(*t));
    std::cout << all.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  for (const sb::BuiltinTask* task : chosen) {
    const sb::BuiltinTask& t = *task;
    const sb::LaunchPolicy& pol = t.spec.candidate_launch;
    const sb::TaskLibraryInfo& l = t.spec.library;
    std::cout << t.spec.name << " (" << l.category << ", tier " << l.tier << ", " << l.split << "; kernel "
              << t.spec.entry << "; launch ";
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
    "tasks",
    "tasks [--category C] [--tier N] [--split S] [--json] | tasks verify [NAME | SPEC.json ...] [options]\n"
    "  leap-sandbox tasks dump NAME|SPEC.json --size-set N [--seed S] OUT_DIR\n"
    "  leap-sandbox tasks measure [NAME | SPEC.json ...] [options]",
    R"(  Lists the built-in tasks with their category, tier and split, their launch policy (fixed, or the
  bounds of the launch plans a candidate may declare) and their variants (reference, fast, wrong, broken).
  --category C         only tasks of category C (activation, loss, gemm, convolution, attention, reduction,
                       scan, norm, pooling, softmax, inference, elementwise)
  --tier N             only tasks of difficulty tier N (1 one pass, 2 cooperation in a block, 3 tiling)
  --split S            only the train or the holdout tasks
  --json               a JSON array: each task's full spec (library fields and reference source included)
                       and its variants
  A built-in task that breaks a rule is left out, with its error on stderr.

  tasks verify [NAME | SPEC.json ...] [--builtin-rules] [--json] [--brief] [-j N] [--cache-dir DIR]
               [--seed S] [--random-schedules N] [-O0|-O1|-O2] [--no-negatives] [--no-variants] [--no-degeneracy]
  Checks tasks on the CPU, without a GPU (docs/tasks.md): each reference on the CPU runtime under
  every schedule against its oracle at every check size and a reduced timing size, the negatives,
  the shipped variants' verdicts and degeneracy; each task in a child process. Exit 0 when all pass.

  tasks dump NAME|SPEC.json --size-set N [--seed S] [--cache-dir DIR] OUT_DIR
  Writes one trial for checking outside leap: OUT_DIR/inputs/PARAM.npy (the inputs as drawn),
  OUT_DIR/outputs/PARAM.npy (the reference's outputs on the CPU runtime) and OUT_DIR/trial.json
  (sizes, seeds, scalars, shapes, whether the oracle agrees). Size set N is check_sizes[N]; N equal to
  the number of check sizes is the reduced timing size. The default seed draws the trial that `tasks
  verify` checks. bfloat16 is written as float32 holding the same values. Exit 1 when the oracle
  disagrees (the files are still written) or the reference cannot run.

  tasks measure [NAME | SPEC.json ...] [--json] [--json-file FILE] [--no-time] [--oracles-only] [-j N]
                [--device N] [--arch A] [--seed S] [--max-seconds S] [--memory-gib G] [--cache-dir DIR]
  On a GPU: each reference at its full timing sizes against its oracle (run on -j N host threads,
  the costliest first, within --memory-gib of memory), then timed from flushed caches with CUDA events;
  the outputs after the timed runs are checked again. --max-seconds: tasks whose oracle had not
  started by then are reported as not measured. References and oracles are the project's own and run
  unconfined in this process. --oracles-only: the oracles alone, no device, nothing checked (how long
  a GPU run's host half takes). Exit 0 when every reference agrees, 1 otherwise, 3 without a GPU.
)",
    run_tasks};

}  // namespace leap_cli
