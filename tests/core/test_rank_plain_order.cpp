// SPDX-License-Identifier: Apache-2.0
// KernelOrder and every ranking path against an order written here, plainly, from the rules in
// kernel_order.hpp's opening comment: one `if` per key, none of the library's helpers (no
// known_speedup, no encoded keys). The library computes its comparisons without branches; this file
// is what they must equal, bit for bit, on random groups full of unknown speedups (NaN, 0, -0,
// negative, -inf), exact ties, band edges and failures of every verdict.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "leap/rank_advantage.hpp"

using leap::KernelOrder;
using leap::Outcome;
using leap::Verdict;

namespace {

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double infinity = std::numeric_limits<double>::infinity();

int plain_severity(Verdict verdict) {
  switch (verdict) {
    case Verdict::wrong_answer: return 2;
    case Verdict::timeout: return 1;
    case Verdict::runtime_error: return 1;
    case Verdict::correct: return 3;  // unsolved yet "correct": above every failure
    default: return 0;                // compile_error, and values outside the enum
  }
}

// Does a beat b under the unweighted keys? +1, -1 or 0, straight from the rules.
int plain_compare(const KernelOrder& order, const Outcome& a, const Outcome& b) {
  const bool a_solved = a.solved_turn > 0;
  const bool b_solved = b.solved_turn > 0;
  if (a_solved && !b_solved) return 1;
  if (!a_solved && b_solved) return -1;
  if (a_solved) {
    if (order.by_turn && a.solved_turn != b.solved_turn) return a.solved_turn < b.solved_turn ? 1 : -1;
    if (order.speedup_tolerance >= 0.0) {
      const bool a_known = a.speedup > 0.0;  // NaN, zero or negative: unknown
      const bool b_known = b.speedup > 0.0;
      if (a_known && !b_known) return 1;
      if (!a_known && b_known) return -1;
      if (a_known && b_known) {
        const double factor = 1.0 + order.speedup_tolerance;
        if (a.speedup > factor * b.speedup) return 1;
        if (b.speedup > factor * a.speedup) return -1;
      }
    }
  } else if (order.by_severity) {
    const int rank_a = plain_severity(a.best_verdict);
    const int rank_b = plain_severity(b.best_verdict);
    if (rank_a != rank_b) return rank_a > rank_b ? 1 : -1;
  }
  if (order.token_tolerance >= 0.0 && (a_solved || !order.tokens_only_when_solved)) {
    const double factor = 1.0 + order.token_tolerance;
    const double ta = a.tokens;
    const double tb = b.tokens;
    if (tb > factor * ta) return 1;
    if (ta > factor * tb) return -1;
  }
  return 0;
}

// What the match is worth to a: the turn decides it at turn_weight, every other key at 1.
double plain_match(const KernelOrder& order, const Outcome& a, const Outcome& b) {
  const int result = plain_compare(order, a, b);
  const bool by_turn = order.by_turn && a.solved_turn > 0 && b.solved_turn > 0 && a.solved_turn != b.solved_turn;
  return by_turn ? order.turn_weight * result : static_cast<double>(result);
}

// Copeland over every ordered pair, summed in member order.
std::vector<double> plain_advantages(std::span<const Outcome> group, const KernelOrder& order) {
  std::vector<double> out(group.size(), 0.0);
  if (group.size() < 2) return out;
  for (std::size_t i = 0; i < group.size(); ++i) {
    double score = 0.0;
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (i != j) score += plain_match(order, group[i], group[j]);
    }
    out[i] = score / static_cast<double>(group.size() - 1);
  }
  return out;
}

double random_speedup(std::mt19937_64& rng, double tolerance) {
  const double edge = (1.0 + tolerance) * 1.5;
  const double pool[] = {not_a_number,
                         -not_a_number,
                         0.0,
                         -0.0,
                         -1.0,
                         -infinity,
                         infinity,
                         1.5,
                         edge,
                         std::nextafter(edge, infinity),
                         std::nextafter(edge, 0.0),
                         std::numeric_limits<double>::denorm_min(),
                         0x1p-31,
                         1e300};
  constexpr int pool_size = sizeof pool / sizeof pool[0];
  const int pick = std::uniform_int_distribution<int>(0, 2 * pool_size - 1)(rng);
  if (pick < pool_size) return pool[pick];
  return std::exp(std::uniform_real_distribution<double>(-1.5, 1.5)(rng));
}

Outcome random_outcome(std::mt19937_64& rng, double tolerance, int max_turn) {
  Outcome o;
  o.solved_turn = std::uniform_int_distribution<int>(0, max_turn)(rng);
  const int verdict =
      std::uniform_int_distribution<int>(0, 9)(rng) == 0 ? 7 : std::uniform_int_distribution<int>(0, 4)(rng);
  o.best_verdict = static_cast<Verdict>(verdict);
  o.speedup = random_speedup(rng, tolerance);
  static const std::uint32_t tokens[] = {0, 1, 100, 105, 106, 200, UINT32_MAX};
  o.tokens = std::uniform_int_distribution<int>(0, 2)(rng) == 0
                 ? std::uniform_int_distribution<std::uint32_t>(0, 300)(rng)
                 : tokens[std::uniform_int_distribution<int>(0, 6)(rng)];
  return o;
}

KernelOrder random_order(std::mt19937_64& rng, bool any_turn_weight) {
  static const double speedup_tolerances[] = {-1.0, 0.0, 0.05, 0.5, infinity};
  static const double token_tolerances[] = {-1.0, 0.0, 0.05, 1.0};
  static const double turn_weights[] = {1.0, 0.0, 0.5, 1.0 / 3.0};
  std::uniform_int_distribution<int> coin(0, 1);
  KernelOrder order;
  order.by_turn = coin(rng) != 0;
  order.by_severity = coin(rng) != 0;
  order.speedup_tolerance = speedup_tolerances[std::uniform_int_distribution<int>(0, 4)(rng)];
  order.token_tolerance = token_tolerances[std::uniform_int_distribution<int>(0, 3)(rng)];
  order.tokens_only_when_solved = coin(rng) != 0;
  order.turn_weight = turn_weights[std::uniform_int_distribution<int>(0, any_turn_weight ? 3 : 1)(rng)];
  return order;
}

std::vector<Outcome> random_group(std::mt19937_64& rng, std::size_t size, const KernelOrder& order) {
  const double tolerance =
      order.speedup_tolerance >= 0.0 && std::isfinite(order.speedup_tolerance) ? order.speedup_tolerance : 0.05;
  const int max_turn = std::uniform_int_distribution<int>(0, 4)(rng) == 0 ? 40 : 3;  // past the bands at times
  std::vector<Outcome> group(size);
  for (Outcome& o : group) o = random_outcome(rng, tolerance, max_turn);
  return group;
}

// Equal bit for bit (== would also accept 0.0 against -0.0).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("KernelOrder::compare and match == the plain order on random pairs, unknown speedups included",
          "[order][property]") {
  std::mt19937_64 rng(20261202);
  for (int round = 0; round < 20000; ++round) {
    const KernelOrder order = random_order(rng, true);
    const auto pair = random_group(rng, 2, order);
    const Outcome& a = pair[0];
    const Outcome& b = pair[1];
    const int expected = order.turn_weight == 0.0 && plain_match(order, a, b) == 0.0 ? 0 : plain_compare(order, a, b);
    INFO("round " << round << ": speedups " << a.speedup << ", " << b.speedup << "; turns " << a.solved_turn << ", "
                  << b.solved_turn << "; tolerance " << order.speedup_tolerance);
    REQUIRE(order.compare(a, b) == expected);
    REQUIRE(order.compare(b, a) == -expected);
    REQUIRE(std::bit_cast<std::uint64_t>(order.match(a, b)) == std::bit_cast<std::uint64_t>(plain_match(order, a, b)));
  }
}

TEST_CASE("the oracle == the plain order's Copeland scores, bit for bit, any turn_weight", "[rank][property]") {
  std::mt19937_64 rng(20261203);
  for (int round = 0; round < 2000; ++round) {
    const KernelOrder order = random_order(rng, true);
    const auto group = random_group(rng, std::uniform_int_distribution<std::size_t>(1, 40)(rng), order);
    REQUIRE(same_bits(leap::rank_advantages_reference(group, order), plain_advantages(group, order)));
  }
}

// Every fast path sums integers (turn_weight 0 or 1), so it must equal the plain sum exactly: groups
// of 2..16 (lane and banded kernels), up to 95 (pairwise) and past it (sorted).
TEST_CASE("rank_advantages == the plain order, bit for bit, every group size and path", "[rank][property]") {
  std::mt19937_64 rng(20261204);
  for (int round = 0; round < 3000; ++round) {
    const KernelOrder order = random_order(rng, false);
    const int band = std::uniform_int_distribution<int>(0, 9)(rng);
    const std::size_t size = band < 7   ? std::uniform_int_distribution<std::size_t>(1, 16)(rng)
                             : band < 9 ? std::uniform_int_distribution<std::size_t>(17, 95)(rng)
                                        : std::uniform_int_distribution<std::size_t>(96, 200)(rng);
    const auto group = random_group(rng, size, order);
    INFO("round " << round << ", G = " << size);
    REQUIRE(same_bits(leap::rank_advantages(group, order), plain_advantages(group, order)));
  }
}

// A trainer's batch: groups of one size (4, 8 and 16 take the fixed-size kernels, 32-byte ones where
// the CPU has AVX2; 64 the pairwise pass), each group equal to the plain order's advantages.
TEST_CASE("a batch of one group size == the plain order group by group, bit for bit", "[rank][batch][property]") {
  std::mt19937_64 rng(20261205);
  for (const std::size_t size : {4u, 8u, 16u, 64u}) {
    for (int round = 0; round < 150; ++round) {
      const KernelOrder order = random_order(rng, false);
      const std::size_t groups = 24;
      std::vector<Outcome> results;
      std::vector<std::uint32_t> ids;
      for (std::size_t g = 0; g < groups; ++g) {
        const auto group = random_group(rng, size, order);
        results.insert(results.end(), group.begin(), group.end());
        ids.insert(ids.end(), size, static_cast<std::uint32_t>(g));
      }
      std::vector<double> out(results.size());
      leap::rank_advantages(results, ids, std::span<double>(out), order);
      for (std::size_t g = 0; g < groups; ++g) {
        const auto group = std::span<const Outcome>(results).subspan(g * size, size);
        const std::vector<double> got(out.begin() + static_cast<std::ptrdiff_t>(g * size),
                                      out.begin() + static_cast<std::ptrdiff_t>((g + 1) * size));
        INFO("G = " << size << ", round " << round << ", group " << g);
        REQUIRE(same_bits(got, plain_advantages(group, order)));
      }
    }
  }
}
