// SPDX-License-Identifier: Apache-2.0
// leap-sandbox eval: one candidate against one task, with a verdict, a speedup and feedback.
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>

#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/run_switches.hpp>
#include <leap/sandbox/task.hpp>

#include "cli.hpp"
#include "task_spec/size_expr.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;

// A built-in task by name, else a spec file; on failure `error` says which of the two was meant.
std::optional<sb::TaskSpec> find_task(const std::string& name_or_file, std::string& error) {
  if (const sb::BuiltinTask* t = sb::find_builtin_task(name_or_file)) return t->spec;
  std::ifstream probe(name_or_file);
  if (!probe) {
    std::string names;
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) names += (names.empty() ? "" : ", ") + t.spec.name;
    error = "unknown task '" + name_or_file + "' (not a built-in task: " + names + "; and no such spec file)";
    return std::nullopt;
  }
  try {
    return sb::load_task_file(name_or_file);
  } catch (const sb::TaskError& e) {
    error = e.what();
    return std::nullopt;
  }
}

// How the timed runs were measured, in one line: the timer, what the stopping rule read, how CUPTI's
// records were tied to the runs, what was lost, the warm-up and the floor.
std::string timing_evidence_text(const sb::EvalResult& r) {
  const sb::TimingEvidence& e = r.timing_evidence;
  std::ostringstream os;
  os << "timing: " << e.method << " (stopping rule read " << e.stopping_rule_source << "), " << e.reps << " run pairs, "
     << e.checked_runs << " checked on the device; CUPTI matched " << e.matched_by_id << " runs by id, "
     << e.matched_by_window << " by time window, " << e.dropped_records << " records dropped; warm-up "
     << e.warmup_candidate.launches << " launches (" << e.warmup_candidate.gpu_ms << " ms) candidate, "
     << e.warmup_reference.launches << " (" << e.warmup_reference.gpu_ms << " ms) reference";
  if (e.floor) os << "; floor " << e.floor->floor_ms << " ms (" << e.floor->bytes << " bytes at peak)";
  if (!e.stopped_early.empty()) os << "; stopped early: " << e.stopped_early;
  if (!r.timing_note.empty()) os << "; note: " << r.timing_note;
  return os.str();
}

int exit_code(sb::EvalStatus status) {
  switch (status) {
    case sb::EvalStatus::verdict: return 0;
    case sb::EvalStatus::no_gpu: return 3;
    case sb::EvalStatus::error: return 1;
  }
  return 1;
}

int run_eval(const Arguments& args) {
  bool as_json = false, time = true;
  sb::RunSwitches switches;  // --unconfined, --accept-weaker-confinement, --allow-pageable-host-access
  std::optional<std::uint64_t> seed;
  std::optional<std::size_t> cache_max_mb;
  std::string arch;
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> header_files;  // NAME, FILE from --header NAME=FILE
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") as_json = true;
    else if (a == "--no-time") time = false;
    else if (switches.parse(a)) continue;
    else if (a == "--seed")
      seed = static_cast<std::uint64_t>(parse_number(a, option_value(args, i), 0, std::numeric_limits<long>::max()));
    else if (a == "--arch") arch = option_value(args, i);
    else if (a == "--cache-max-mb")
      cache_max_mb = static_cast<std::size_t>(parse_number(a, option_value(args, i), 1, 1L << 24));
    else if (a == "--header") {
      const std::string& spec = option_value(args, i);
      const std::size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
        usage_error("eval: --header expects NAME=FILE (e.g. --header sharedmem.cuh=src/sharedmem.cuh), got '" + spec +
                    "'");
      }
      header_files.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (a.starts_with("-") && a != "-") usage_error("eval: unknown option '" + a + "'");
    else positional.push_back(a);
  }
  if (positional.size() != 2) usage_error("eval: expected TASK CANDIDATE.cu");
  std::string error;
  const std::optional<sb::TaskSpec> task = find_task(positional[0], error);
  if (!task) {
    std::cerr << "leap-sandbox: " << error << "\n";
    return 2;
  }
  std::ifstream in(positional[1], std::ios::binary);
  if (!in) {
    std::cerr << "leap-sandbox: cannot read " << positional[1] << "\n";
    return 2;
  }
  const std::string source{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<sb::Header> headers;  // under the same rules as a task's shipped headers
  for (const auto& [name, file] : header_files) {
    std::ifstream h(file, std::ios::binary);
    if (!h) {
      std::cerr << "leap-sandbox: cannot read header " << file << " (given as --header " << name << "=" << file
                << ")\n";
      return 2;
    }
    headers.push_back({name, std::string{std::istreambuf_iterator<char>(h), std::istreambuf_iterator<char>()}});
  }
  sb::EvaluatorConfig config = evaluator_config(arch, seed, time, switches.unconfined, cache_max_mb);
  switches.apply(config);
  sb::Evaluator evaluator(std::move(config));
  const sb::EvalResult r = evaluator.evaluate(*task, source, headers);
  if (as_json) {
    std::cout << sb::to_json(r) << "\n";
  } else {
    std::cout << task->name << ": " << sb::to_string(r.status);
    if (r.verdict) std::cout << ", " << leap::to_string(*r.verdict);
    if (r.speedup_unknown == sb::SpeedupUnknown::none) {
      std::cout << ", speedup " << r.speedup << "x";
    } else if (r.verdict == leap::Verdict::correct) {  // why it is unknown (it then ranks below every known one)
      std::cout << ", speedup unknown (" << sb::to_string(r.speedup_unknown) << ")";
    }
    if (r.compile.unconfined) std::cout << " (compiled UNCONFINED)";
    else if (!r.compile.missing_layers.empty()) std::cout << " (compiled with WEAKER CONFINEMENT)";
    std::cout << "\n";
    if (r.launch_plan && r.launch_plan->resolved) {  // an invalid plan's reason is the feedback below
      const sb::LaunchPlanReport& p = *r.launch_plan;
      std::cout << "launch plan (" << (p.source == sb::PlanSource::candidate ? "declared" : "the task's")
                << "), at sizes " << sb::sizes_text(p.sizes) << ": " << sb::to_text(*p.resolved) << "\n";
    }
    if (r.candidate.runs > 0) std::cout << timing_evidence_text(r) << "\n";
    std::cout << (r.error.empty() ? r.feedback : r.error) << "\n";
  }
  return exit_code(r.status);
}

}  // namespace

const Command eval_command{
    "eval", "eval [options] TASK CANDIDATE.cu",
    R"(  Evaluates CANDIDATE.cu against TASK (a built-in task name or a task spec file): compile, then run,
  check against the reference (fresh random inputs per trial, poisoned outputs, inputs checked
  unchanged, guard zones) and time it (CUPTI) in the GPU runner, a process that a watchdog kills past the
  task's time limit. A candidate may declare its launch plan in `// leap-launch:` lines where the
  task allows it (see docs/sandbox.md, "Launch plans"); the plan is checked before anything runs, and an
  invalid or refused plan is a compile_error verdict. Without a GPU the compile verdict is real, the
  plan is checked and reported, and a compiling candidate gets status no_gpu. Prints a summary, or
  with --json one object: status, verdict, speedup, speedup_unknown (why it is null: reason and
  detail), timings (both sides' figures and how they were measured: method, stopping_rule_source,
  reps, checked_runs, matched_by_id, matched_by_window, dropped_records, warmup, floor,
  stopped_early), compile, launch_plan, cuda_error, detail, feedback, error, seed, trials.
  --json               JSON output
  --seed N             base seed of the trials (default: random)
  --no-time            verdict only, no timing
  --arch A             compile target (default: the GPU's own, sm_XYa from sm_90 on, e.g. sm_90a on
                       an H100; else sm_90)
  --header NAME=FILE   ship FILE as the header NAME (#include "NAME" finds it; repeatable), through
                       the include jail like the source; launch-plan lines are read from
                       CANDIDATE.cu only
  --unconfined         compile without Landlock, seccomp and the private root, for machines that
                       lack them (the result's compile.unconfined says so); never for untrusted
                       source
  --accept-weaker-confinement
                       compile where the private root is missing (user namespaces off); the
                       result's compile.missing_layers names what was not in force
  --allow-pageable-host-access
                       evaluate even on a device whose kernels can read and write this machine's
                       pageable memory (its attribute PAGEABLE_MEMORY_ACCESS; info shows it); without
                       it the GPU runner refuses there, since a candidate could reach the harness's memory
  --cache-max-mb N     the disk cache's budget in MiB (default 1024)
  Exit status: 0 a verdict was reached, 3 no GPU (compiled, not run), 2 bad input (unknown task,
  malformed spec, unreadable file), 1 the harness failed.
)",
    run_eval};

}  // namespace leap_cli
