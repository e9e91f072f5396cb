// SPDX-License-Identifier: Apache-2.0
// KernelOrder, key by key, on hand-made pairs.
#include <catch2/catch.hpp>
#include <limits>

#include "leap/kernel_order.hpp"

using leap::KernelOrder;
using leap::Outcome;
using leap::Verdict;

namespace {
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

Outcome solved(int turn, double speedup = not_a_number, std::uint32_t tokens = 0) {
  return Outcome{turn, Verdict::correct, speedup, tokens};
}
Outcome failed(Verdict verdict, std::uint32_t tokens = 0) { return Outcome{0, verdict, not_a_number, tokens}; }

// Checks compare in both directions, so every case also checks antisymmetry.
void check(const KernelOrder& order, const Outcome& a, const Outcome& b, int expected) {
  CHECK(order.compare(a, b) == expected);
  CHECK(order.compare(b, a) == -expected);
}
}  // namespace

TEST_CASE("solved beats unsolved whatever the other keys say", "[order]") {
  KernelOrder order;
  order.by_severity = true;
  order.tokens_only_when_solved = false;
  check(order, solved(3, 0.01, 100000), failed(Verdict::wrong_answer, 1), 1);
  check(KernelOrder::turns_only(), solved(3), failed(Verdict::wrong_answer), 1);
}

TEST_CASE("by_turn: an earlier solving turn wins, before speedup and tokens", "[order]") {
  KernelOrder order;
  check(order, solved(1, 1.0, 5000), solved(2, 10.0, 10), 1);
  check(order, solved(2), solved(3), 1);
  order.by_turn = false;  // turn ignored: speedup decides
  check(order, solved(1, 1.0, 5000), solved(2, 10.0, 10), -1);
}

TEST_CASE("by_severity ranks failures: wrong answer > timeout = runtime error > compile error", "[order]") {
  KernelOrder order;
  order.by_severity = true;
  check(order, failed(Verdict::wrong_answer), failed(Verdict::timeout), 1);
  check(order, failed(Verdict::wrong_answer), failed(Verdict::runtime_error), 1);
  check(order, failed(Verdict::timeout), failed(Verdict::runtime_error), 0);
  check(order, failed(Verdict::runtime_error), failed(Verdict::compile_error), 1);
  check(order, failed(Verdict::timeout), failed(Verdict::compile_error), 1);
  order.by_severity = false;
  check(order, failed(Verdict::wrong_answer), failed(Verdict::compile_error), 0);
}

TEST_CASE("speedup: higher wins outside the relative band, ties inside it", "[order]") {
  KernelOrder order;
  order.token_tolerance = -1.0;
  order.speedup_tolerance = 0.5;  // powers of two keep the boundary exact
  check(order, solved(1, 3.0), solved(1, 2.0), 0);        // 3 <= 1.5 * 2: the boundary is a tie
  check(order, solved(1, 3.0000001), solved(1, 2.0), 1);  // just outside
  check(order, solved(1, 1.0), solved(1, 4.0), -1);
  order.speedup_tolerance = 0.05;
  check(order, solved(1, 1.04), solved(1, 1.0), 0);
  check(order, solved(1, 1.06), solved(1, 1.0), 1);
  check(order, solved(1, 1060.0), solved(1, 1000.0), 1);  // relative, so scale-free
  check(order, solved(1, 1040.0), solved(1, 1000.0), 0);
  order.speedup_tolerance = 0.0;  // strict: only equal speedups tie
  check(order, solved(1, 1.0000001), solved(1, 1.0), 1);
  check(order, solved(1, 1.0), solved(1, 1.0), 0);
  check(order, solved(1, inf), solved(1, 1.0), 1);
}

TEST_CASE("speedup: NaN, zero or negative on either side is a tie on that key", "[order]") {
  KernelOrder order;
  order.token_tolerance = -1.0;
  for (double unknown : {not_a_number, 0.0, -2.0}) {
    check(order, solved(1, unknown), solved(1, 5.0), 0);
    check(order, solved(1, unknown), solved(1, unknown), 0);
  }
  order.token_tolerance = 0.0;  // the tie falls through to the token key
  check(order, solved(1, not_a_number, 10), solved(1, 5.0, 20), 1);
}

TEST_CASE("speedup key off: tokens decide between solved outcomes of one turn", "[order]") {
  KernelOrder order;
  order.speedup_tolerance = -1.0;
  check(order, solved(1, 1.0, 10), solved(1, 9.0, 20), 1);
}

TEST_CASE("tokens: fewer wins outside the band; equal counts, 0 too, always tie", "[order]") {
  KernelOrder order;
  order.speedup_tolerance = -1.0;
  check(order, solved(1, not_a_number, 100), solved(1, not_a_number, 101), 1);
  check(order, solved(1, not_a_number, 100), solved(1, not_a_number, 100), 0);
  check(order, solved(1, not_a_number, 0), solved(1, not_a_number, 0), 0);
  check(order, solved(1, not_a_number, 0), solved(1, not_a_number, 1), 1);
  order.token_tolerance = 0.1;
  check(order, solved(1, not_a_number, 100), solved(1, not_a_number, 110), 0);
  check(order, solved(1, not_a_number, 100), solved(1, not_a_number, 111), 1);
  order.token_tolerance = -1.0;
  check(order, solved(1, not_a_number, 100), solved(1, not_a_number, 5000), 0);
}

TEST_CASE("tokens_only_when_solved limits the token key to solved pairs", "[order]") {
  KernelOrder order;
  check(order, failed(Verdict::compile_error, 10), failed(Verdict::compile_error, 900), 0);
  order.tokens_only_when_solved = false;
  check(order, failed(Verdict::compile_error, 10), failed(Verdict::compile_error, 900), 1);
  order.by_severity = true;  // severity comes first among unsolved outcomes
  check(order, failed(Verdict::compile_error, 10), failed(Verdict::wrong_answer, 900), -1);
}

TEST_CASE("turns_only is LEAP's order: turn decides, nothing else", "[order]") {
  const KernelOrder order = KernelOrder::turns_only();
  CHECK(order.by_turn);
  CHECK_FALSE(order.by_severity);
  check(order, solved(1, 1.0, 10), solved(1, 100.0, 99999), 0);
  check(order, solved(1, 0.1, 99999), solved(2, 100.0, 1), 1);
  check(order, failed(Verdict::wrong_answer, 1), failed(Verdict::compile_error, 9), 0);
}

TEST_CASE("tolerance ties are not transitive: the token key can close a cycle", "[order]") {
  KernelOrder order;  // speedup band 5 %, then fewer tokens
  const Outcome a = solved(1, 1.00, 100);
  const Outcome b = solved(1, 1.04, 200);
  const Outcome c = solved(1, 1.08, 300);
  CHECK(order.compare(a, b) == 1);  // speedup tie, fewer tokens
  CHECK(order.compare(b, c) == 1);  // speedup tie, fewer tokens
  CHECK(order.compare(c, a) == 1);  // 1.08 > 1.05 * 1.00
}

TEST_CASE("a NaN tolerance is refused with the field's name", "[order][errors]") {
  KernelOrder order;
  order.speedup_tolerance = not_a_number;
  CHECK_THROWS_WITH(order.compare(solved(1), solved(2)), Catch::Contains("speedup_tolerance is NaN"));
  order = KernelOrder{};
  order.token_tolerance = not_a_number;
  CHECK_THROWS_AS(order.validate(), std::invalid_argument);
  CHECK_THROWS_WITH(order.validate(), Catch::Contains("token_tolerance"));
}
