// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "leap/trajectory.hpp"

using leap::Trajectory;
using leap::Turn;
using leap::Verdict;

TEST_CASE("summarize: the first correct turn, the best verdict, its speedup, all tokens", "[trajectory]") {
  Trajectory<> trajectory;
  trajectory.turns = {{Verdict::compile_error, NAN, 300, "error: expected ';'", {}},
                      {Verdict::wrong_answer, NAN, 250, "max abs error 0.5 at [17]", {}},
                      {Verdict::correct, 1.3, 280, "1.30x faster", {}},
                      {Verdict::correct, 2.0, 100, "", {}}};
  const leap::Outcome outcome = leap::summarize(trajectory);
  CHECK(outcome.solved_turn == 3);
  CHECK(outcome.best_verdict == Verdict::correct);
  CHECK(outcome.speedup == 1.3);
  CHECK(outcome.tokens == 930);
}

TEST_CASE("summarize an unsolved trajectory: the most advanced failure", "[trajectory]") {
  Trajectory<std::string> trajectory;  // a trainer's own payload: the completion text
  trajectory.turns = {{Verdict::wrong_answer, NAN, 10, "", "first try"},
                      {Verdict::runtime_error, NAN, 20, "", "second"}};
  const leap::Outcome outcome = leap::summarize(trajectory);
  CHECK(outcome.solved_turn == 0);
  CHECK(outcome.best_verdict == Verdict::wrong_answer);
  CHECK(std::isnan(outcome.speedup));
  CHECK(outcome.tokens == 30);
  CHECK(trajectory.num_turns() == 2);
}

TEST_CASE("summarize: empty trajectory, token saturation", "[trajectory]") {
  CHECK(leap::summarize(Trajectory<>{}) == leap::Outcome{});
  Trajectory<> big;
  big.turns = {{Verdict::compile_error, NAN, 4000000000u, "", {}}, {Verdict::compile_error, NAN, 4000000000u, "", {}}};
  CHECK(leap::summarize(big).tokens == 4294967295u);
}
