// SPDX-License-Identifier: Apache-2.0
// Turn and Trajectory: what the rollout loop records of one sampled attempt at a task.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "leap/outcome.hpp"
#include "leap/verdict.hpp"

namespace leap {

// The payload type for trainers that keep nothing of their own per turn.
struct NoPayload {
  friend constexpr bool operator==(NoPayload, NoPayload) noexcept { return true; }
};

// One turn: the candidate the policy wrote (payload: token ids, text, anything the trainer keeps)
// and what the environment said of it.
template <class Payload = NoPayload>
struct Turn {
  Verdict verdict = Verdict::compile_error;
  double speedup = std::numeric_limits<double>::quiet_NaN();  // meaningful when verdict == correct
  std::uint32_t tokens = 0;                                   // completion tokens of this turn
  std::string feedback;                                       // the environment's feedback for the next turn
  Payload payload{};
  // The environment could not judge this turn (after its retries): there is no verdict (verdict is a
  // placeholder), feedback says why, and the trajectory ends here, masked (see rollout.hpp).
  bool environment_failure = false;

  friend bool operator==(const Turn& a, const Turn& b) {
    return a.verdict == b.verdict && same_speedup(a.speedup, b.speedup) && a.tokens == b.tokens &&
           a.feedback == b.feedback && a.payload == b.payload && a.environment_failure == b.environment_failure;
  }
};

// The turns of one trajectory, first to last.
template <class Payload = NoPayload>
struct Trajectory {
  std::vector<Turn<Payload>> turns;

  int num_turns() const noexcept { return static_cast<int>(turns.size()); }
  // Whether a turn has no verdict because the environment failed: such a trajectory is not ranked.
  bool environment_failed() const noexcept {
    for (const Turn<Payload>& turn : turns) {
      if (turn.environment_failure) return true;
    }
    return false;
  }
  friend bool operator==(const Trajectory&, const Trajectory&) = default;
};

// The trajectory as the ranking sees it: the first correct turn (1-based, 0 if none), the most
// advanced verdict of any turn, the speedup of the first correct turn, and the tokens of all turns
// (saturating at 2^32 - 1). An empty trajectory is an unsolved compile error with 0 tokens. A turn
// without a verdict (environment_failure) adds its tokens and nothing else.
template <class Payload>
Outcome summarize(const Trajectory<Payload>& trajectory) {
  Outcome outcome;
  std::uint64_t tokens = 0;
  for (std::size_t i = 0; i < trajectory.turns.size(); ++i) {
    const Turn<Payload>& turn = trajectory.turns[i];
    tokens += turn.tokens;
    if (turn.environment_failure) continue;
    if (turn.verdict > outcome.best_verdict) outcome.best_verdict = turn.verdict;
    if (turn.verdict == Verdict::correct && outcome.solved_turn == 0) {
      outcome.solved_turn = static_cast<int>(i) + 1;
      outcome.speedup = turn.speedup;
    }
  }
  constexpr std::uint64_t max_tokens = std::numeric_limits<std::uint32_t>::max();
  outcome.tokens = static_cast<std::uint32_t>(tokens < max_tokens ? tokens : max_tokens);
  return outcome;
}

}  // namespace leap
