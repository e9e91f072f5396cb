// SPDX-License-Identifier: Apache-2.0
// A SIMULATED kernel-writing environment: no compiler, no GPU, only dice with hidden weights.
// It stands in for the sandbox so that a toy policy can be trained in seconds and the training
// methods compared on equal terms.
//
// Every task has a hidden difficulty:
//   trivial      some first-turn strategy usually works; debugging turns add little
//   recoverable  first tries usually fail, but the right repair for the failure usually works
//   hopeless     nothing works, first try or repair; debugging turns are wasted evaluations
// A first turn picks one of `strategies` approaches: each has its own chance of success on the task,
// its own speed when correct and its own length in tokens. A failure is a compile error, a wrong
// answer or a crash, with feedback that says which. A repair turn picks one of `repair_moves`
// fixes; only the fix that this task's failure of that kind needs has a real chance, so the feedback
// carries value, and finding the fix takes debugging turns on that very task.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <leap/rollout.hpp>

namespace toy {

inline constexpr int strategies = 6;
inline constexpr int failure_kinds = 3;  // compile error, wrong answer, crash
inline constexpr int repair_moves = 6;   // fix syntax, indexing, synchronisation, bounds, types, launch shape

enum class Difficulty { trivial, recoverable, hopeless };

inline const char* to_string(Difficulty difficulty) {
  switch (difficulty) {
    case Difficulty::trivial: return "trivial";
    case Difficulty::recoverable: return "recoverable";
    case Difficulty::hopeless: return "hopeless";
  }
  return "?";
}

// What the policy chose for one turn: a strategy on turn 1, a repair move after.
struct Choice {
  int strategy = 0;         // the approach of turn 1, carried along so a repaired kernel keeps its speed
  int repair = -1;          // -1 on turn 1
  int repairing_kind = -1;  // the failure kind the repair answers (what the policy read in the feedback)
};

struct Task {
  std::uint64_t id = 0;
  int index = 0;                                // the policy's row for this task
  Difficulty difficulty = Difficulty::trivial;  // hidden from the policy
  std::array<double, strategies> first_try_success{};
  std::array<double, strategies> speedup{};         // over the reference, when correct
  std::array<std::uint32_t, strategies> tokens{};   // completion length of the strategy
  std::array<double, failure_kinds> failure_mix{};  // how failures split into kinds
  std::array<int, failure_kinds> right_fix{};       // the repair move each kind of failure needs here
  double repairability = 0.0;                       // chance that the right repair works
};

// A task set with a fixed mix of difficulties, the same for a given seed. With hard_recoverable, the
// recoverable tasks rarely succeed on turn 1 (so their groups often fail every sample, which LEAP's
// default band prunes as catastrophic) instead of succeeding about a third of the time.
inline std::vector<Task> make_tasks(int count, std::uint64_t seed, bool hard_recoverable = false) {
  std::mt19937_64 rng(seed ^ 0x7461736b73ull);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Task> tasks(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    Task& task = tasks[static_cast<std::size_t>(i)];
    task.id = static_cast<std::uint64_t>(1000 + i);
    task.index = i;
    const int slot = i % 20;  // 30 % trivial, 50 % recoverable, 20 % hopeless
    task.difficulty = slot < 6 ? Difficulty::trivial : (slot < 16 ? Difficulty::recoverable : Difficulty::hopeless);
    const int best = static_cast<int>(rng() % strategies);
    for (int s = 0; s < strategies; ++s) {
      double p = 0.0;
      switch (task.difficulty) {
        case Difficulty::trivial: p = s == best ? 0.85 + 0.1 * unit(rng) : 0.2 + 0.3 * unit(rng); break;
        case Difficulty::recoverable:
          p = hard_recoverable ? (s == best ? 0.25 + 0.15 * unit(rng) : 0.02 + 0.08 * unit(rng))
                               : (s == best ? 0.45 + 0.15 * unit(rng) : 0.15 + 0.2 * unit(rng));
          break;
        case Difficulty::hopeless: p = 0.01 * unit(rng); break;
      }
      task.first_try_success[static_cast<std::size_t>(s)] = p;
      task.speedup[static_cast<std::size_t>(s)] = 0.6 + 1.8 * unit(rng);
      task.tokens[static_cast<std::size_t>(s)] = 400 + static_cast<std::uint32_t>(rng() % 1200);
    }
    for (int& fix : task.right_fix) fix = static_cast<int>(rng() % repair_moves);
    const double a = unit(rng) + 0.2, b = unit(rng) + 0.2, c = unit(rng) + 0.2;
    task.failure_mix = {a / (a + b + c), b / (a + b + c), c / (a + b + c)};
    task.repairability = task.difficulty == Difficulty::recoverable ? 0.65 + 0.25 * unit(rng)
                         : task.difficulty == Difficulty::trivial   ? 0.5
                                                                    : 0.02;
  }
  return tasks;
}

inline const char* failure_name(int kind) {
  static const char* names[failure_kinds] = {"compile error", "wrong answer", "runtime error"};
  return names[kind];
}

// The simulated evaluation. Deterministic in (task, choice, key.seed), so thread-safe and repeatable.
class SimulatedKernelEnvironment {
 public:
  leap::Evaluation evaluate(const Task& task, const leap::Completion<Choice>& completion,
                            const leap::SampleKey& key) const {
    std::mt19937_64 rng(key.seed ^ 0x656e76ull);  // the environment's own stream, apart from the policy's
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const Choice& choice = completion.payload;
    const auto s = static_cast<std::size_t>(choice.strategy);
    double p_correct = task.first_try_success[s];
    if (choice.repair >= 0) {
      const bool right = choice.repairing_kind >= 0 &&
                         choice.repair == task.right_fix[static_cast<std::size_t>(choice.repairing_kind)];
      p_correct = right ? task.repairability : 0.1 * task.repairability;
    }
    leap::Evaluation evaluation;
    evaluation.feedback_tokens = 40;
    if (unit(rng) < p_correct) {
      evaluation.verdict = leap::Verdict::correct;
      const double repaired_penalty = choice.repair >= 0 ? 0.9 : 1.0;
      evaluation.speedup = task.speedup[s] * repaired_penalty * std::exp(0.05 * (unit(rng) - 0.5));
      evaluation.feedback = "correct; " + std::to_string(evaluation.speedup).substr(0, 4) + "x the reference";
      return evaluation;
    }
    // The failure kind: a repair that missed mostly leaves the same kind of failure behind.
    int kind = 0;
    if (choice.repair >= 0 && unit(rng) < 0.7) {
      kind = choice.repairing_kind;
    } else {
      const double u = unit(rng);
      kind = u < task.failure_mix[0] ? 0 : (u < task.failure_mix[0] + task.failure_mix[1] ? 1 : 2);
    }
    static const leap::Verdict verdicts[failure_kinds] = {leap::Verdict::compile_error, leap::Verdict::wrong_answer,
                                                          leap::Verdict::runtime_error};
    static const char* details[failure_kinds] = {"kernel.cu(12): error: expected a \";\"",
                                                 "max abs error 0.31 at index 4097 (expected 1.25, got 0.94)",
                                                 "CUDA_ERROR_ILLEGAL_ADDRESS"};
    evaluation.verdict = verdicts[kind];
    evaluation.feedback = std::string(failure_name(kind)) + ": " + details[kind];
    return evaluation;
  }
};

// The failure kind a feedback text names; -1 when it names none.
inline int failure_kind_of(const std::string& feedback) {
  for (int kind = 0; kind < failure_kinds; ++kind) {
    if (feedback.rfind(failure_name(kind), 0) == 0) return kind;
  }
  return -1;
}

}  // namespace toy
