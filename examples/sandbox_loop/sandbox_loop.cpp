// SPDX-License-Identifier: Apache-2.0
// sandbox_loop: the LEAP loop against the real sandbox. The built-in tasks ship kernel variants of
// known quality (reference = correct but plain, fast, wrong, broken); a small softmax policy picks a
// variant per task on turn 1 and, after a failure, a repair move conditioned on what the compiler or
// the checker said. leap::run_step runs the turns, the DCP gate and the rank-based advantages;
// leap::sandbox::Evaluator compiles with NVRTC and runs, checks and times on the GPU.
//
// Without a GPU the compile feedback is still real: the example compiles every variant, shows what
// the policy would be told, and says plainly that running kernels needs a GPU.
//
// Usage: sandbox_loop [--steps N] [--group-size G] [-j N] [--max-seconds S] [run switches]
// -j N evaluates N trajectories at a time (compiles run in parallel; kernels still run one at a
// time in the GPU runner); --max-seconds S starts no step that the last one's time says would end
// past S seconds, so a scripted run fits its budget. The run switches (--unconfined,
// --accept-weaker-confinement, --allow-pageable-host-access) are leap::sandbox::RunSwitches.
#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <leap/executor.hpp>
#include <leap/rollout.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/run_switches.hpp>

#include "../common/softmax_choice.hpp"

namespace {

// The menu: what a turn-1 completion can be, and what a repair can do.
const std::vector<std::string> variants = {"reference", "fast", "wrong", "broken"};
enum Repair : int { use_reference = 0, use_fast = 1, resubmit = 2, repair_count = 3 };
const char* repair_names[repair_count] = {"rewrite as the plain kernel", "rewrite as the fast kernel", "resubmit"};

struct Task {
  std::uint64_t id = 0;
  int index = 0;
  const leap::sandbox::BuiltinTask* builtin = nullptr;
};

struct Choice {
  int variant = 0;  // index into `variants`
  int repair = -1;  // -1 on turn 1
};

// Which feedback a repair is conditioned on: the kind of failure the sandbox reported.
int feedback_kind(leap::Verdict verdict) {
  switch (verdict) {
    case leap::Verdict::compile_error: return 0;
    case leap::Verdict::wrong_answer: return 1;
    default: return 2;  // runtime error or timeout
  }
}

class MenuPolicy {
 public:
  using payload_type = Choice;
  explicit MenuPolicy(int tasks)
      : first_(Eigen::MatrixXd::Zero(tasks, static_cast<Eigen::Index>(variants.size()))),
        repair_(Eigen::MatrixXd::Zero(3, repair_count)) {}

  leap::Completion<Choice> complete(const Task& task, const leap::Trajectory<Choice>& so_far,
                                    const leap::SampleKey& key) const {
    std::mt19937_64 rng(key.seed);
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    leap::Completion<Choice> completion;
    if (so_far.turns.empty()) {
      completion.payload.variant = examples::sample(first_.row(task.index), u);
    } else {
      const leap::Turn<Choice>& last = so_far.turns.back();
      completion.payload.repair = examples::sample(repair_.row(feedback_kind(last.verdict)), u);
      completion.payload.variant = completion.payload.repair == use_reference ? 0
                                   : completion.payload.repair == use_fast    ? 1
                                                                              : last.payload.variant;
    }
    const auto* variant = task.builtin->variant(variants[static_cast<std::size_t>(completion.payload.variant)]);
    completion.tokens = variant ? static_cast<std::uint32_t>(variant->source.size() / 4) : 0;  // ~4 bytes a token
    return completion;
  }

  template <class StepResult>
  void update(const StepResult& step, double learning_rate, int group_size) {
    Eigen::MatrixXd grad_first = Eigen::MatrixXd::Zero(first_.rows(), first_.cols());
    Eigen::MatrixXd grad_repair = Eigen::MatrixXd::Zero(repair_.rows(), repair_.cols());
    for (const auto& sample : step.samples) {
      if (sample.masked) continue;  // the environment could not judge it: not trained
      const Choice& choice = step.turn_of(sample).payload;
      if (choice.repair < 0) {
        examples::add_log_prob_gradient(first_.row(static_cast<Eigen::Index>(sample.task_index)), choice.variant,
                                        sample.advantage, grad_first.row(static_cast<Eigen::Index>(sample.task_index)));
      } else {
        const auto& previous = step.trajectories[sample.trajectory].turns[static_cast<std::size_t>(sample.turn - 2)];
        const int kind = feedback_kind(previous.verdict);
        examples::add_log_prob_gradient(repair_.row(kind), choice.repair, sample.advantage, grad_repair.row(kind));
      }
    }
    first_ += (learning_rate / group_size) * grad_first;
    repair_ += (learning_rate / group_size) * grad_repair;
  }

  double preference(int task, int variant) const { return examples::softmax(first_.row(task))[variant]; }
  double repair_preference(int kind, int move) const { return examples::softmax(repair_.row(kind))[move]; }

 private:
  Eigen::MatrixXd first_;
  Eigen::MatrixXd repair_;
};

// The sandbox as a leap environment. The menu is fixed, so each (task, variant) is evaluated once
// and its result reused: a real trainer's candidates are all new and would not be.
class SandboxEnvironment {
 public:
  explicit SandboxEnvironment(leap::sandbox::Evaluator& evaluator) : evaluator_(evaluator) {}

  leap::Evaluation evaluate(const Task& task, const leap::Completion<Choice>& completion, const leap::SampleKey&) {
    const std::string& name = variants[static_cast<std::size_t>(completion.payload.variant)];
    const auto key = std::make_pair(task.index, completion.payload.variant);
    {
      std::lock_guard lock(mutex_);
      if (const auto found = memo_.find(key); found != memo_.end()) return found->second;
    }
    const auto* variant = task.builtin->variant(name);
    leap::Evaluation evaluation;
    if (variant == nullptr) {
      evaluation.feedback = "no such variant";
    } else {
      const leap::sandbox::EvalResult result = evaluator_.evaluate(task.builtin->spec, variant->source);
      if (result.status != leap::sandbox::EvalStatus::verdict || !result.verdict) {
        // Not the candidate's failure: run_step retries it, then masks the trajectory. Not memoised.
        return leap::Evaluation::environment_failed("the sandbox reached no verdict: " + result.error + result.detail);
      }
      evaluation.verdict = *result.verdict;
      evaluation.speedup = result.speedup;
      evaluation.feedback = result.feedback;
    }
    std::lock_guard lock(mutex_);
    memo_.emplace(key, evaluation);
    return evaluation;
  }

 private:
  leap::sandbox::Evaluator& evaluator_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, leap::Evaluation> memo_;
};

// No GPU: compile every variant for real and show the feedback the policy would get.
int compile_only(leap::sandbox::Evaluator& evaluator, const std::vector<Task>& tasks) {
  std::printf("%-10s %-10s %-8s %s\n", "task", "variant", "compile", "feedback the policy would get");
  for (const Task& task : tasks) {
    for (const std::string& name : variants) {
      const auto* variant = task.builtin->variant(name);
      if (variant == nullptr) continue;
      const leap::sandbox::EvalResult result = evaluator.evaluate(task.builtin->spec, variant->source);
      std::string feedback = result.feedback.empty() ? result.detail : result.feedback;
      for (char& c : feedback) c = c == '\n' ? ' ' : c;
      if (feedback.size() > 90) feedback = feedback.substr(0, 87) + "...";
      std::printf("%-10s %-10s %-8s %s\n", task.builtin->spec.name.substr(0, 10).c_str(), name.c_str(),
                  std::string(to_string(result.compile.status)).c_str(), feedback.c_str());
    }
  }
  std::printf(
      "\nRunning kernels needs a GPU (%s: %s).\nThe compile verdicts above are real; wrong answers, crashes, "
      "timings and the training loop need a CUDA device.\n",
      std::string(to_string(evaluator.gpu().state)).c_str(), evaluator.gpu().reason.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 6;
  int group_size = 4;
  int jobs = 1;
  double max_seconds = 0.0;  // 0: no limit
  leap::sandbox::RunSwitches switches;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (switches.parse(arg)) continue;
    if (arg == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--group-size" && i + 1 < argc) {
      group_size = std::atoi(argv[++i]);
    } else if (arg == "-j" && i + 1 < argc) {
      jobs = std::atoi(argv[++i]);
    } else if (arg == "--max-seconds" && i + 1 < argc) {
      max_seconds = std::atof(argv[++i]);
    } else {
      if (arg != "--help") std::fprintf(stderr, "sandbox_loop: unknown option '%s'\n", arg.c_str());
      std::fprintf(stderr, "usage: sandbox_loop [--steps N] [--group-size G] [-j N] [--max-seconds S] [switches]\n%s",
                   std::string(leap::sandbox::run_switches_help()).c_str());
      return arg == "--help" ? 0 : 2;
    }
  }
  if (steps < 1 || group_size < 2 || jobs < 1 || jobs > 64 || !(max_seconds >= 0.0)) {
    std::fprintf(stderr,
                 "sandbox_loop: --steps must be >= 1, --group-size >= 2, -j in [1, 64] and --max-seconds >= 0\n");
    return 2;
  }

  std::vector<Task> tasks;
  for (const auto& builtin : leap::sandbox::builtin_tasks()) {
    tasks.push_back(Task{static_cast<std::uint64_t>(tasks.size()), static_cast<int>(tasks.size()), &builtin});
  }
  const auto started = std::chrono::steady_clock::now();
  leap::sandbox::EvaluatorConfig config;
  config.seed = 7;  // reproducible trials
  switches.apply(config);
  leap::sandbox::Evaluator evaluator(config);
  std::printf("sandbox_loop: %zu built-in tasks, variants %s/%s/%s/%s, GPU: %s, -j %d, run switches: %s\n\n",
              tasks.size(), variants[0].c_str(), variants[1].c_str(), variants[2].c_str(), variants[3].c_str(),
              std::string(to_string(evaluator.gpu().state)).c_str(), jobs, switches.describe().c_str());
  if (!evaluator.gpu().ok()) return compile_only(evaluator, tasks);

  MenuPolicy policy(static_cast<int>(tasks.size()));
  SandboxEnvironment environment(evaluator);
  leap::FailBandGate gate = leap::FailBandGate::leap_default(group_size);
  std::optional<leap::ThreadPool> pool;
  if (jobs > 1) pool.emplace(static_cast<unsigned>(jobs - 1));  // the calling thread works too
  double last_step_seconds = 0.0;
  for (int step = 1; step <= steps; ++step) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (max_seconds > 0 && step > 1 && elapsed + last_step_seconds > max_seconds) {
      std::printf("stopped before step %d: %.1f s so far and %.1f s for the last step would pass --max-seconds %.1f\n",
                  step, elapsed, last_step_seconds, max_seconds);
      break;
    }
    const auto step_start = std::chrono::steady_clock::now();
    leap::RolloutOptions options;
    options.group_size = group_size;
    options.max_turns = 3;
    options.gamma = 0.9;
    options.seed = 11;
    options.step = static_cast<std::uint64_t>(step);
    const auto result = pool ? leap::run_step(tasks, policy, environment, gate, leap::RankAdvantage<>{}, *pool, options)
                             : leap::run_step(tasks, policy, environment, gate, leap::RankAdvantage<>{},
                                              leap::InlineExecutor{}, options);
    policy.update(result, 2.0, group_size);
    std::printf("step %d: Acc@1 %.2f  Acc@3 %.2f  evaluations %lld  groups expanded %d of %d  (%.1f s)\n", step,
                result.metrics.accuracy_at(1), result.metrics.accuracy_at(3),
                static_cast<long long>(result.metrics.evaluations), result.metrics.groups(leap::Expansion::expand),
                result.metrics.tasks, result.metrics.wall_seconds);
    last_step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
  }
  std::printf("\nturn-1 preferences after training:\n%-12s", "task");
  for (const auto& name : variants) std::printf(" %10s", name.c_str());
  std::printf("\n");
  for (const Task& task : tasks) {
    std::printf("%-12s", task.builtin->spec.name.c_str());
    for (std::size_t v = 0; v < variants.size(); ++v)
      std::printf(" %10.2f", policy.preference(task.index, static_cast<int>(v)));
    std::printf("\n");
  }
  const char* kinds[3] = {"after a compile error", "after a wrong answer", "after a crash or hang"};
  std::printf("\nrepair preferences after training:\n");
  for (int kind = 0; kind < 3; ++kind) {
    std::printf("  %-22s", kinds[kind]);
    for (int move = 0; move < repair_count; ++move) {
      std::printf("  %s %.2f", repair_names[move], policy.repair_preference(kind, move));
    }
    std::printf("\n");
  }
  return 0;
}
