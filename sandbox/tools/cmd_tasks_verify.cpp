// SPDX-License-Identifier: Apache-2.0
// leap-sandbox tasks verify: each task's reference checked on the CPU against its oracle, its
// negatives, its variants and its degeneracy (sandbox/src/verify/verify_task.hpp), every task in a
// child process of its own, so a reference that crashes the CPU runtime fails its task alone.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include <leap/sandbox/builtin_tasks.hpp>

#include "leap/cpu_runtime/compile.hpp"

#include "cli.hpp"
#include "cmd_tasks.hpp"
#include "verify/verify_task.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;
namespace vf = leap::sandbox::verify;
using nlohmann::json;

struct VerifyArgs {
  std::vector<std::string> names;  // built-in names and spec files, in order; empty: every built-in task
  bool builtin_rules = false;
  bool as_json = false;
  bool brief = false;
  unsigned jobs = 1;
  std::string cache_dir;
  std::string optimization = "-O1";
  vf::VerifyOptions options;
};

VerifyArgs parse_verify_args(const Arguments& args) {
  VerifyArgs v;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") v.as_json = true;
    else if (a == "--builtin-rules") v.builtin_rules = true;
    else if (a == "--brief") v.brief = true;
    else if (a == "--no-negatives") v.options.negatives = false;
    else if (a == "--no-variants") v.options.variants = false;
    else if (a == "--no-degeneracy") v.options.degeneracy = false;
    else if (a == "-j" || a == "--jobs") v.jobs = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 64));
    else if (a == "--cache-dir") v.cache_dir = option_value(args, i);
    else if (a == "--seed")
      v.options.seed = static_cast<std::uint64_t>(parse_number(a, option_value(args, i), 0, 1L << 62));
    else if (a == "--random-schedules")
      v.options.random_schedules = static_cast<int>(parse_number(a, option_value(args, i), 0, 16));
    else if (a == "-O0" || a == "-O1" || a == "-O2") v.optimization = a;
    else if (!a.empty() && a[0] == '-') usage_error("tasks verify: unknown option '" + a + "'");
    else v.names.push_back(a);
  }
  if (v.cache_dir.empty()) v.cache_dir = default_verify_cache_dir();
  return v;
}

// One task's verification, in this process; a task that cannot be loaded is a report of one failed check.
vf::TaskReport verify_one(const std::string& name, const VerifyArgs& v) {
  std::optional<vf::VerifyTarget> target;
  try {
    target = vf::find_target(name, v.builtin_rules);
  } catch (const std::exception& e) {
    vf::TaskReport r;
    r.task = name;
    r.origin = vf::names_spec_file(name) ? name : "built-in";
    r.add("spec", false, e.what());
    return r;
  }
  vf::ModuleCache cache(v.cache_dir, v.optimization);
  vf::TaskReport r = vf::verify_task(*target, cache, v.options);
  r.checks.insert(r.checks.begin(), vf::CheckResult{"spec", true, "valid (" + target->origin + ")"});
  return r;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string name;
  std::string output;
};

Child start(const std::string& name, const VerifyArgs& v) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string text;
    try {
      text = vf::to_json(verify_one(name, v)).dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (const std::exception& e) {
      vf::TaskReport r;
      r.task = name;
      r.add("environment", false, e.what());
      text = vf::to_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t w = write(fds[1], text.data() + at, text.size() - at);
      if (w <= 0) break;
      at += static_cast<std::size_t>(w);
    }
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0], name, ""};
}

// Reads the child's report to its end and reaps it; a child that died says how.
vf::TaskReport finish(Child& c) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(c.fd, buf, sizeof buf);
    if (n > 0) c.output.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !c.output.empty()) {
    try {
      return vf::report_from_json(json::parse(c.output));
    } catch (const std::exception&) {}
  }
  vf::TaskReport r;
  r.task = c.name;
  r.add("crash", false,
        WIFSIGNALED(status)
            ? "the verification died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + "): a kernel or the oracle crashed the process"
            : "the verification ended without a report (exit " + std::to_string(WEXITSTATUS(status)) + ")");
  return r;
}

int run_tasks_verify(const Arguments& args) {
  VerifyArgs v = parse_verify_args(args);
  std::vector<vf::TaskReport> reports;
  if (v.names.empty()) {
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) v.names.push_back(t.spec.name);
    for (const sb::BuiltinTaskError& e : sb::builtin_task_errors()) {
      vf::TaskReport r;
      r.task = e.task;
      r.origin = "built-in";
      r.add("spec", false, e.message);
      reports.push_back(std::move(r));
    }
  }
  std::map<pid_t, Child> running;
  std::size_t next = 0;
  auto report_one = [&](const vf::TaskReport& r) {
    if (!v.as_json) std::cout << vf::to_text(r, v.brief) << std::flush;
  };
  for (const vf::TaskReport& r : reports) report_one(r);
  // The header directories every child compiles against, written once here and removed at exit: a
  // child leaves by _exit, so one it made for itself would be left behind in $TMPDIR.
  leap::cpu_runtime::kernel_include_dir();
  vf::oracle_include_dir();
  while (next < v.names.size() || !running.empty()) {
    while (next < v.names.size() && running.size() < v.jobs) {
      Child c = start(v.names[next++], v);
      running.emplace(c.pid, std::move(c));
    }
    // The oldest child first: reports come in the order asked for when jobs is 1, near it otherwise.
    auto it = running.begin();
    vf::TaskReport r = finish(it->second);
    running.erase(it);
    report_one(r);
    reports.push_back(std::move(r));
  }
  std::size_t failed = 0;
  double cpu = 0;
  for (const vf::TaskReport& r : reports) {
    failed += r.ok() ? 0 : 1;
    cpu += r.cpu_seconds;
  }
  if (v.as_json) {
    json all = json::array();
    for (const vf::TaskReport& r : reports) all.push_back(vf::to_json(r));
    std::cout << all.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cout << reports.size() - failed << " of " << reports.size() << " tasks verified (" << cpu << " CPU s)\n";
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

std::string default_verify_cache_dir() {
  if (const char* env = std::getenv("LEAP_VERIFY_CACHE_DIR"); env != nullptr && *env != '\0') return env;
  if (const std::string d = default_cache_dir(); !d.empty()) return d + "/verify";
  return "/tmp/leap-verify-" + std::to_string(getuid());
}

const TasksSubcommand tasks_verify_subcommand{
    "verify",
    R"(  tasks verify [NAME | SPEC.json ...] [--builtin-rules] [--json] [--brief] [-j N] [--cache-dir DIR]
               [--seed S] [--random-schedules N] [-O0|-O1|-O2] [--no-negatives] [--no-variants] [--no-degeneracy]
    Checks tasks on the CPU, without a GPU (docs/tasks.md): the reference on the CPU runtime under
    every schedule against the task's oracle at every check size and a reduced timing size, the
    negatives (zeros, a copy of an input, a partial output), the shipped variants' verdicts and
    degeneracy. No names: every built-in task. A name with a '/' or ending in .json is a spec file
    (its reference, variants and oracle_file read beside it); --builtin-rules holds it to a built-in
    task's rules too. Each task runs in a child process; -j N runs N at once. Modules are kept in
    --cache-dir (default $LEAP_VERIFY_CACHE_DIR, else the cache directory's verify/). Exit 0 when
    every task passes, 1 otherwise.
)",
    run_tasks_verify};

}  // namespace leap_cli
