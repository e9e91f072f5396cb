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

// Checks compare in both directions, so every case also checks antisymmetry, and that match() agrees
// with compare() where no match is weighted.
void check(const KernelOrder& order, const Outcome& a, const Outcome& b, int expected) {
  CHECK(order.compare(a, b) == expected);
  CHECK(order.compare(b, a) == -expected);
  if (order.turn_weight == 1.0) {
    CHECK(order.match(a, b) == expected);
    CHECK(order.match(b, a) == -expected);
  }
}

// The value of a match in both directions, for turn_weight cases.
void check_match(const KernelOrder& order, const Outcome& a, const Outcome& b, double expected) {
  CHECK(order.match(a, b) == expected);
  CHECK(order.match(b, a) == -expected);
  CHECK(order.compare(a, b) == (expected > 0) - (expected < 0));
}
}  // namespace

TEST_CASE("solved beats unsolved whatever the other keys say", "[order]") {
  KernelOrder order = KernelOrder::with_speedup_and_tokens();
  order.by_severity = true;
  order.tokens_only_when_solved = false;
  check(order, solved(3, 0.01, 100000), failed(Verdict::wrong_answer, 1), 1);
  check(KernelOrder::turns_only(), solved(3), failed(Verdict::wrong_answer), 1);
}

TEST_CASE("by_turn: an earlier solving turn wins, before speedup and tokens", "[order]") {
  KernelOrder order = KernelOrder::with_speedup_and_tokens();
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
  KernelOrder order = KernelOrder::with_speedup(0.5);     // powers of two keep the boundary exact
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

TEST_CASE("unknown speed never pays: a NaN, zero or negative speedup loses to any known one", "[order]") {
  KernelOrder order = KernelOrder::with_speedup();
  const double unknowns[] = {not_a_number, 0.0, -0.0, -2.0, -inf};
  for (double unknown : unknowns) {
    check(order, solved(1, unknown), solved(1, 5.0), -1);
    check(order, solved(1, unknown), solved(1, 0.5), -1);  // slower than the reference still beats unknown
    check(order, solved(1, unknown), solved(1, std::numeric_limits<double>::denorm_min()), -1);
    check(order, solved(1, unknown), solved(1, inf), -1);
    for (double other : unknowns) check(order, solved(1, unknown), solved(1, other), 0);  // two unknown tie
    check(order, solved(1, unknown), solved(2, 5.0), 1);                                  // the turn still comes first
    check(order, solved(1, unknown), failed(Verdict::wrong_answer), 1);                   // and solved beats unsolved
  }
  order.speedup_tolerance = inf;  // a band that ties every known speed: unknown still loses
  check(order, solved(1, not_a_number), solved(1, 0.5), -1);
  check(order, solved(1, 0.5), solved(1, 1e300), 0);
  order.token_tolerance = 0.0;  // the token key decides only ties: not known against unknown
  check(order, solved(1, not_a_number, 10), solved(1, 5.0, 20), -1);
  check(order, solved(1, not_a_number, 10), solved(1, 0.0, 20), 1);  // two unknown: tokens decide
  order = KernelOrder{};                                             // the key off: speed, known or not, never counts
  check(order, solved(1, not_a_number), solved(1, 5.0), 0);
}

TEST_CASE("speedup key off: tokens decide between solved outcomes of one turn", "[order]") {
  KernelOrder order;
  order.token_tolerance = 0.0;
  check(order, solved(1, 1.0, 10), solved(1, 9.0, 20), 1);
}

TEST_CASE("tokens: fewer wins outside the band, equal counts, 0 too, always tie", "[order]") {
  KernelOrder order;
  order.token_tolerance = 0.0;
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
  KernelOrder order = KernelOrder::with_speedup_and_tokens();
  check(order, failed(Verdict::compile_error, 10), failed(Verdict::compile_error, 900), 0);
  order.tokens_only_when_solved = false;
  check(order, failed(Verdict::compile_error, 10), failed(Verdict::compile_error, 900), 1);
  order.by_severity = true;  // severity comes first among unsolved outcomes
  check(order, failed(Verdict::compile_error, 10), failed(Verdict::wrong_answer, 900), -1);
}

TEST_CASE("the default is LEAP's order: turn decides, nothing else, turns_only() is the same order", "[order]") {
  const KernelOrder order;
  const KernelOrder named = KernelOrder::turns_only();
  CHECK(named.by_turn == order.by_turn);
  CHECK(named.by_severity == order.by_severity);
  CHECK(named.speedup_tolerance == order.speedup_tolerance);
  CHECK(named.token_tolerance == order.token_tolerance);
  CHECK(named.tokens_only_when_solved == order.tokens_only_when_solved);
  CHECK(named.turn_weight == order.turn_weight);
  CHECK(order.by_turn);
  CHECK_FALSE(order.by_severity);
  CHECK_FALSE(order.speedup_key_on());
  CHECK_FALSE(order.token_key_on(true));
  CHECK_FALSE(order.token_key_on(false));
  CHECK(order.turn_weight == 1.0);
  check(order, solved(1, 1.0, 10), solved(1, 100.0, 99999), 0);
  check(order, solved(1, 0.1, 99999), solved(2, 100.0, 1), 1);
  check(order, failed(Verdict::wrong_answer, 1), failed(Verdict::compile_error, 9), 0);
}

TEST_CASE("tolerance ties are not transitive: the token key can close a cycle", "[order]") {
  const KernelOrder order = KernelOrder::with_speedup_and_tokens();  // speedup band 5 %, then fewer tokens
  const Outcome a = solved(1, 1.00, 100);
  const Outcome b = solved(1, 1.04, 200);
  const Outcome c = solved(1, 1.08, 300);
  CHECK(order.compare(a, b) == 1);  // speedup tie, fewer tokens
  CHECK(order.compare(b, c) == 1);  // speedup tie, fewer tokens
  CHECK(order.compare(c, a) == 1);  // 1.08 > 1.05 * 1.00
}

TEST_CASE("presets: with_speedup adds the band, with_speedup_and_tokens the token key too", "[order]") {
  const KernelOrder speed = KernelOrder::with_speedup();
  CHECK(speed.speedup_tolerance == 0.05);
  CHECK_FALSE(speed.token_key_on(true));
  CHECK(speed.by_turn);
  CHECK(speed.turn_weight == 1.0);
  check(speed, solved(1, 1.06, 900), solved(1, 1.0, 10), 1);
  check(speed, solved(1, 1.04, 900), solved(1, 1.0, 10), 0);  // tokens are not a key here
  check(speed, solved(1, 0.5), solved(2, 9.0), 1);            // the turn still comes first
  CHECK(KernelOrder::with_speedup(0.2).speedup_tolerance == 0.2);

  const KernelOrder both = KernelOrder::with_speedup_and_tokens();
  CHECK(both.speedup_tolerance == 0.05);
  CHECK(both.token_tolerance == 0.0);
  check(both, solved(1, 1.04, 900), solved(1, 1.0, 10), -1);  // speedup tie, fewer tokens win
  const KernelOrder loose = KernelOrder::with_speedup_and_tokens(0.1, 0.25);
  CHECK(loose.speedup_tolerance == 0.1);
  CHECK(loose.token_tolerance == 0.25);
}

TEST_CASE("presets refuse a negative, NaN or infinite tolerance, naming it", "[order][errors]") {
  CHECK_THROWS_WITH(KernelOrder::with_speedup(-0.05), Catch::Contains("with_speedup: tolerance (-0.05"));
  CHECK_THROWS_WITH(KernelOrder::with_speedup(not_a_number), Catch::Contains("must be finite and >= 0"));
  CHECK_THROWS_WITH(KernelOrder::with_speedup_and_tokens(0.05, -1.0), Catch::Contains("token_tolerance (-1"));
  CHECK_THROWS_WITH(KernelOrder::with_speedup_and_tokens(inf, 0.0), Catch::Contains("speedup_tolerance (inf"));
}

TEST_CASE("turn_weight scales exactly the matches the turn decides", "[order][turn_weight]") {
  KernelOrder order;
  order.turn_weight = 0.25;
  check_match(order, solved(1), solved(2), 0.25);
  check_match(order, solved(1), solved(3), 0.25);
  check_match(order, solved(3), failed(Verdict::wrong_answer), 1.0);  // success vs failure: whole
  check_match(order, solved(2), solved(2), 0.0);
  check_match(order, failed(Verdict::compile_error), failed(Verdict::wrong_answer), 0.0);

  order.turn_weight = 0.0;  // successes tie, any success still beats any failure
  check_match(order, solved(1), solved(3), 0.0);
  check_match(order, solved(3), failed(Verdict::wrong_answer), 1.0);

  // With the speedup key on, a match the turn decides stays decided by it (worth w); a match between
  // successes at one turn is not weighted.
  KernelOrder speed = KernelOrder::with_speedup();
  speed.turn_weight = 0.5;
  check_match(speed, solved(1, 1.0), solved(2, 9.0), 0.5);
  check_match(speed, solved(2, 9.0), solved(2, 1.0), 1.0);
  speed.turn_weight = 0.0;
  check_match(speed, solved(1, 1.0), solved(2, 9.0), 0.0);

  KernelOrder no_turn;  // by_turn off: turn_weight has nothing to scale
  no_turn.by_turn = false;
  no_turn.turn_weight = 0.3;
  CHECK_FALSE(no_turn.turn_weighted());
  check_match(no_turn, solved(1), solved(2), 0.0);
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

TEST_CASE("a turn_weight outside [0, 1] is refused with its value", "[order][errors]") {
  for (double bad : {-0.1, 1.5, not_a_number, inf}) {
    KernelOrder order;
    order.turn_weight = bad;
    CHECK_THROWS_WITH(order.validate(), Catch::Contains("turn_weight") && Catch::Contains("outside [0, 1]"));
    CHECK_THROWS_AS(order.compare(solved(1), solved(2)), std::invalid_argument);
    CHECK_THROWS_AS(order.match(solved(1), solved(2)), std::invalid_argument);
  }
}
