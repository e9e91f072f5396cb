// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "leap/json.hpp"

using Catch::Matchers::Contains;
using leap::KernelOrder;
using leap::Outcome;
using leap::Verdict;
using nlohmann::json;

namespace {
template <class T>
T round_trip(const T& value) {
  return json::parse(json(value).dump()).get<T>();
}
}  // namespace

TEST_CASE("Verdict is written as its name", "[json]") {
  for (Verdict verdict : leap::all_verdicts) {
    CHECK(json(verdict) == std::string(leap::to_string(verdict)));
    CHECK(round_trip(verdict) == verdict);
  }
}

TEST_CASE("Outcome round trips exactly, NaN and infinity included", "[json]") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> any(1e-300, 1e300);
  for (int i = 0; i < 500; ++i) {
    const Outcome outcome{i % 4, leap::all_verdicts[static_cast<std::size_t>(i % 5)], any(rng),
                          static_cast<std::uint32_t>(rng())};
    REQUIRE(round_trip(outcome) == outcome);
  }
  CHECK(json(Outcome{}).at("speedup").is_null());
  CHECK(std::isnan(round_trip(Outcome{}).speedup));
  const Outcome fast{1, Verdict::correct, std::numeric_limits<double>::infinity(), 5};
  CHECK(json(fast).at("speedup") == "inf");
  CHECK(round_trip(fast) == fast);
}

TEST_CASE("KernelOrder round trips, missing keys keep their defaults", "[json]") {
  KernelOrder order;
  order.by_severity = true;
  order.speedup_tolerance = 0.123456789012345;
  order.token_tolerance = -1.0;
  order.tokens_only_when_solved = false;
  order.turn_weight = 0.3;
  const KernelOrder back = round_trip(order);
  CHECK(back.turn_weight == 0.3);
  CHECK(back.by_turn == order.by_turn);
  CHECK(back.by_severity);
  CHECK(back.speedup_tolerance == order.speedup_tolerance);
  CHECK(back.token_tolerance == -1.0);
  CHECK_FALSE(back.tokens_only_when_solved);

  const KernelOrder partial = json::parse(R"({"by_severity": true})").get<KernelOrder>();
  CHECK(partial.by_severity);
  CHECK(partial.speedup_tolerance == KernelOrder{}.speedup_tolerance);
  CHECK(partial.turn_weight == 1.0);
  CHECK_THROWS_WITH(json::parse(R"({"turn_weight": 1.5})").get<KernelOrder>(),
                    Contains("KernelOrder.turn_weight") && Contains("in [0, 1]"));
}

TEST_CASE("Turn and Trajectory round trip, with and without a payload", "[json]") {
  leap::Trajectory<> plain;
  plain.turns = {{Verdict::compile_error, NAN, 12, "error: \"x\" undefined\n", {}},
                 {Verdict::correct, 1.75, 40, "", {}}};
  CHECK(round_trip(plain) == plain);
  CHECK_FALSE(json(plain.turns[0]).contains("payload"));

  leap::Trajectory<std::vector<int>> with_tokens;
  with_tokens.turns = {{Verdict::wrong_answer, NAN, 3, "mismatch", {101, 7, 42}}};
  CHECK(round_trip(with_tokens) == with_tokens);
  CHECK(json(with_tokens).at("turns").at(0).at("payload") == json({101, 7, 42}));
}

TEST_CASE("malformed documents name the field", "[json][errors]") {
  CHECK_THROWS_AS(json::parse(R"({"solved_turn": "1", "best_verdict": "correct"})").get<Outcome>(), leap::json_error);
  CHECK_THROWS_WITH(json::parse(R"({"solved_turn": "1", "best_verdict": "correct"})").get<Outcome>(),
                    Contains("Outcome.solved_turn") && Contains("expected an integer"));
  CHECK_THROWS_WITH(json::parse(R"({"solved_turn": 1})").get<Outcome>(), Contains("'Outcome.best_verdict' is missing"));
  CHECK_THROWS_WITH(json::parse(R"({"solved_turn": 1, "best_verdict": "great"})").get<Outcome>(),
                    Contains("Outcome.best_verdict") && Contains("\"great\""));
  CHECK_THROWS_WITH(json::parse(R"({"solved_turn": -2, "best_verdict": "correct"})").get<Outcome>(),
                    Contains("Outcome.solved_turn"));
  CHECK_THROWS_WITH(json::parse(R"({"solved_turn": 0, "best_verdict": "timeout", "tokens": -5})").get<Outcome>(),
                    Contains("Outcome.tokens"));
  CHECK_THROWS_WITH(json::parse(R"({"solved_turn": 0, "best_verdict": "timeout", "speedup": "fast"})").get<Outcome>(),
                    Contains("Outcome.speedup"));
  CHECK_THROWS_WITH(json::parse("[1, 2]").get<Outcome>(), Contains("'Outcome': expected an object"));
  CHECK_THROWS_WITH(json::parse(R"({"by_turn": 1})").get<KernelOrder>(), Contains("KernelOrder.by_turn"));
  CHECK_THROWS_WITH(json::parse(R"({"speedup_tolerance": null})").get<KernelOrder>(),
                    Contains("KernelOrder.speedup_tolerance"));
  CHECK_THROWS_WITH(json::parse(R"({"turns": {}})").get<leap::Trajectory<>>(), Contains("Trajectory.turns"));
  CHECK_THROWS_WITH(json::parse(R"({"turns": [{"verdict": "correct"}, {"verdict": 3}]})").get<leap::Trajectory<>>(),
                    Contains("Turn.verdict") && Contains("Trajectory.turns[1]"));
  CHECK_THROWS_WITH(
      json::parse(R"({"turns": [{"verdict": "correct", "payload": "x"}]})").get<leap::Trajectory<std::vector<int>>>(),
      Contains("Turn.payload"));
}

TEST_CASE("a failed read leaves the target as it was", "[json][errors]") {
  Outcome kept{2, Verdict::correct, 1.5, 10};
  CHECK_THROWS(json::parse(R"({"solved_turn": 1, "best_verdict": "correct", "tokens": "many"})").get_to(kept));
  CHECK(kept == Outcome{2, Verdict::correct, 1.5, 10});
}
