// SPDX-License-Identifier: Apache-2.0
// leap-sandbox tasks dump: one trial of a task as .npy files (sandbox/src/verify/dump_trial.hpp), for
// checking a task with numpy or torch, outside leap.
#include <iostream>
#include <optional>

#include "cli.hpp"
#include "cmd_tasks.hpp"
#include "verify/dump_trial.hpp"
#include "verify/verify_task.hpp"

namespace leap_cli {
namespace {

namespace vf = leap::sandbox::verify;

struct DumpArgs {
  std::string name;
  std::string dir;
  std::optional<std::size_t> size_set;
  std::uint64_t seed = vf::VerifyOptions{}.seed;  // the trial `tasks verify` draws by default
  std::string cache_dir;
};

DumpArgs parse_dump_args(const Arguments& args) {
  DumpArgs d;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--size-set") d.size_set = static_cast<std::size_t>(parse_number(a, option_value(args, i), 0, 1000));
    else if (a == "--seed") d.seed = static_cast<std::uint64_t>(parse_number(a, option_value(args, i), 0, 1L << 62));
    else if (a == "--cache-dir") d.cache_dir = option_value(args, i);
    else if (!a.empty() && a[0] == '-') usage_error("tasks dump: unknown option '" + a + "'");
    else positional.push_back(a);
  }
  if (positional.size() != 2) usage_error("tasks dump: expected a task (NAME or SPEC.json) and a directory");
  if (!d.size_set) usage_error("tasks dump: --size-set N is required (tasks verify --json names the size sets)");
  d.name = positional[0];
  d.dir = positional[1];
  if (d.cache_dir.empty()) d.cache_dir = default_verify_cache_dir();
  return d;
}

int run_tasks_dump(const Arguments& args) {
  const DumpArgs d = parse_dump_args(args);
  vf::VerifyTarget target;
  try {
    target = vf::find_target(d.name, false);
  } catch (const std::exception& e) {
    std::cerr << "leap-sandbox: tasks dump: " << e.what() << "\n";
    return 1;
  }
  vf::ModuleCache cache(d.cache_dir, "-O1");
  const vf::DumpResult r = vf::dump_trial(target, cache, *d.size_set, d.seed, d.dir);
  if (!r.ok()) {
    std::cerr << "leap-sandbox: tasks dump: " << r.error << "\n";
    return 1;
  }
  std::cout << target.spec.name << ", " << r.label << ", seed " << d.seed << ": written to " << d.dir
            << " (oracle: " << r.oracle << ")\n";
  return r.oracle == "agrees" ? 0 : 1;
}

}  // namespace

const TasksSubcommand tasks_dump_subcommand{"dump", "  tasks dump NAME|SPEC.json --size-set N [--seed S] OUT_DIR\n",
                                            run_tasks_dump};

}  // namespace leap_cli
