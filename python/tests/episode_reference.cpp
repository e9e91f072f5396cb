// SPDX-License-Identifier: Apache-2.0
// The C++ side of test_episode_agreement.py: leap::run_step itself, with the scripted policy and
// environment that the test writes again in Python, over steps of `tasks` tasks; prints every turn,
// outcome, advantage, gate decision and metric (doubles as hexadecimal floats, so nothing is rounded).
//
//   leap_python_episode_reference TASKS G MAX_TURNS GAMMA SEED FIRST_STEP STEPS GATE ORDER NORMALIZATION [RETRIES]
// GATE: dcp | severity | always | never | budget | tracker (one gate object for all the steps)
// ORDER: published | speedup | speedup_tokens | severity_weighted
// NORMALIZATION: none | group_std | batch_rms
// RETRIES: RolloutOptions::environment_retries (default 1)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "leap/advantage_estimator.hpp"
#include "leap/difficulty_tracker.hpp"
#include "leap/gate_policies.hpp"
#include "leap/rollout.hpp"

namespace {

struct Task {
  std::uint64_t id = 0;
};

// The script, a function of the key (and of how many turns came before) only. The test's Python twin
// must compute the very same values.
struct ScriptedPolicy {
  leap::Completion<> complete(const Task&, const leap::Trajectory<>& so_far, const leap::SampleKey& key) const {
    if ((key.seed >> 20) % 53 == 0) throw std::runtime_error("scripted policy failure");
    return {leap::NoPayload{}, static_cast<std::uint32_t>(50 + (key.seed >> 7) % 200 + 3 * so_far.turns.size())};
  }
};

struct ScriptedEnvironment {
  leap::Evaluation evaluate(const Task&, const leap::Completion<>& completion, const leap::SampleKey& key) const {
    // Environment failures: unavailable (a throw, then a reported failure on every retry: masked), and a
    // dead letter that the first retry gets past.
    if ((key.seed >> 40) % 47 == 0) {
      if (key.attempt == 0) throw std::runtime_error("scripted environment failure");
      return leap::Evaluation::environment_failed("scripted environment unavailable");
    }
    if ((key.seed >> 50) % 23 == 0 && key.attempt == 0) return leap::Evaluation::environment_failed("dead-lettered");
    static constexpr int base[] = {10, 40, 70, 95};
    static constexpr double speedups[] = {0.5, 1.0, 1.03, 1.05, 1.1, 2.0, -1.0, 1.0};  // -1: NaN
    const auto roll = static_cast<int>((key.seed >> 11) % 100);
    leap::Evaluation evaluation;
    evaluation.feedback_tokens = static_cast<std::uint32_t>((key.seed >> 45) % 30 + completion.tokens % 3);
    if (roll < base[key.task_id % 4] + 25 * (key.turn - 1)) {
      evaluation.verdict = leap::Verdict::correct;
      const double s = speedups[(key.seed >> 33) % 8];
      evaluation.speedup = s < 0 ? std::numeric_limits<double>::quiet_NaN() : s;
    } else {
      evaluation.verdict = static_cast<leap::Verdict>((key.seed >> 29) % 4);
    }
    evaluation.feedback = "scripted feedback";
    return evaluation;
  }
};

void print_double(double value) { std::printf(" %a", value); }

template <class Gate, class Advantage>
void run(const std::vector<Task>& tasks, Gate& gate, const Advantage& advantage, leap::RolloutOptions options,
         int steps) {
  for (int k = 0; k < steps; ++k) {
    const auto result = leap::run_step(tasks, ScriptedPolicy{}, ScriptedEnvironment{}, gate, advantage,
                                       leap::InlineExecutor{}, options);
    std::printf("step %llu\n", static_cast<unsigned long long>(options.step));
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto& s = result.turn1_stats[t];
      std::printf("group %zu %d %d %d %d %d %d %d %d\n", t, s.size, s.n_correct, s.n_wrong_answer, s.n_runtime_error,
                  s.n_timeout, s.n_compile_error, static_cast<int>(result.decisions[t].expansion),
                  static_cast<int>(result.decisions[t].reason));
    }
    std::size_t sample = 0;
    for (std::size_t i = 0; i < result.trajectories.size(); ++i) {
      const auto& o = result.outcomes[i];
      std::printf("traj %zu %d %d %d %u %d", i, result.trajectories[i].num_turns(), o.solved_turn,
                  static_cast<int>(o.best_verdict), o.tokens, static_cast<int>(result.samples[sample].masked));
      print_double(o.speedup);
      print_double(result.advantages[i]);
      for (int turn = 1; turn <= result.trajectories[i].num_turns(); ++turn)
        print_double(result.samples[sample++].advantage);
      std::printf("\n");
      int turn = 1;
      for (const auto& record : result.trajectories[i].turns) {
        std::printf("turn %zu %d %d %u %d", i, turn++, static_cast<int>(record.verdict), record.tokens,
                    static_cast<int>(record.environment_failure));
        print_double(record.speedup);
        std::printf("\n");
      }
    }
    const auto& m = result.metrics;
    std::printf("metrics %llu %d %d %d %d %lld %lld %lld %lld %d %llu %llu %d %d",
                static_cast<unsigned long long>(m.step), m.tasks, m.group_size, m.max_turns, m.trajectories,
                static_cast<long long>(m.evaluations), static_cast<long long>(m.policy_errors),
                static_cast<long long>(m.environment_errors), static_cast<long long>(m.environment_retries),
                m.masked_trajectories, static_cast<unsigned long long>(m.completion_tokens),
                static_cast<unsigned long long>(m.feedback_tokens), m.solved_later, m.solved_later_negative);
    print_double(m.advantage_rms);
    for (double a : m.accuracy_at_turn) print_double(a);
    for (auto e : m.evaluations_per_turn) std::printf(" %lld", static_cast<long long>(e));
    for (int g : m.groups_by_expansion) std::printf(" %d", g);
    for (int g : m.groups_by_reason) std::printf(" %d", g);
    std::printf("\n");
    ++options.step;
  }
}

template <class Advantage>
void with_gate(const std::string& name, const std::vector<Task>& tasks, const Advantage& advantage,
               const leap::RolloutOptions& options, int steps) {
  const auto band = leap::FailBandGate::leap_default(options.group_size);
  if (name == "dcp") {
    run(tasks, band, advantage, options, steps);
  } else if (name == "severity") {
    const auto gate = leap::SeverityAwareGate::leap_default(options.group_size);
    run(tasks, gate, advantage, options, steps);
  } else if (name == "always") {
    const leap::AlwaysExpand gate;
    run(tasks, gate, advantage, options, steps);
  } else if (name == "never") {
    const leap::NeverExpand gate;
    run(tasks, gate, advantage, options, steps);
  } else if (name == "budget") {
    leap::BudgetedGate<leap::FailBandGate> gate{band, 20, -1, {}};
    run(tasks, gate, advantage, options, steps);
  } else if (name == "tracker") {
    leap::DifficultyTracker gate;
    run(tasks, gate, advantage, options, steps);
  } else {
    throw std::invalid_argument("unknown gate " + name);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 11 && argc != 12) {
    std::fprintf(stderr,
                 "usage: leap_python_episode_reference TASKS G MAX_TURNS GAMMA SEED FIRST_STEP STEPS GATE "
                 "ORDER NORMALIZATION [RETRIES]\n");
    return 2;
  }
  std::vector<Task> tasks(std::strtoull(argv[1], nullptr, 10));
  for (std::size_t t = 0; t < tasks.size(); ++t) tasks[t].id = 7 * t + 3;  // ids that are not the indices
  leap::RolloutOptions options;
  options.group_size = std::atoi(argv[2]);
  options.max_turns = std::atoi(argv[3]);
  options.gamma = std::strtod(argv[4], nullptr);
  options.seed = std::strtoull(argv[5], nullptr, 10);
  options.step = std::strtoull(argv[6], nullptr, 10);
  if (argc == 12) options.environment_retries = std::atoi(argv[11]);
  const int steps = std::atoi(argv[7]);
  const std::string gate = argv[8];
  const std::string order_name = argv[9];
  const std::string normalization = argv[10];

  leap::RankAdvantage<> advantage;
  if (order_name == "speedup") {
    advantage.order = leap::KernelOrder::with_speedup(0.05);
  } else if (order_name == "speedup_tokens") {
    advantage.order = leap::KernelOrder::with_speedup_and_tokens(0.05, 0.0);
  } else if (order_name == "severity_weighted") {
    advantage.order.by_severity = true;
    advantage.order.turn_weight = 0.5;
  } else if (order_name != "published") {
    std::fprintf(stderr, "unknown order %s\n", order_name.c_str());
    return 2;
  }
  if (normalization == "group_std") {
    advantage.normalization = leap::AdvantageNormalization::group_std;
  } else if (normalization == "batch_rms") {
    advantage.normalization = leap::AdvantageNormalization::batch_rms;
  } else if (normalization != "none") {
    std::fprintf(stderr, "unknown normalization %s\n", normalization.c_str());
    return 2;
  }
  with_gate(gate, tasks, advantage, options, steps);
  return 0;
}
