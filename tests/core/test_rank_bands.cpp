// SPDX-License-Identifier: Apache-2.0
// The banded keys (detail/rank_lanes.hpp): orders with a speedup or token key fold the class and the
// speedup band into one double per side by power-of-two scaling. These tests hold that path to the
// oracle where it is most likely to go wrong: speedups exactly on and one ulp beside a band edge,
// at the edges of the range the bands hold, turns at and past the last one they hold, unknown
// speedups of every kind, verdicts outside the enum, and groups that do not fit mixed into batches
// of one group size (which must then take the general path, with the same numbers).
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
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

// What the bands claim to hold, stated independently of the kernel: every solved turn at most 27
// when the turn counts, every known speedup s with 2^-30 <= s and (1 + tol) * s <= 2^30.
bool fits_bands(const std::vector<Outcome>& group, const KernelOrder& order) {
  for (const Outcome& o : group) {
    if (o.solved_turn <= 0) continue;
    if (order.by_turn && o.solved_turn > 27) return false;
    const bool known = order.speedup_tolerance >= 0.0 && o.speedup > 0.0;
    if (known && !(o.speedup >= 0x1p-30 && (1.0 + order.speedup_tolerance) * o.speedup <= 0x1p30)) return false;
  }
  return true;
}

// Speedups that sit on band edges for the tolerance: s, (1 + tol) * s exactly as compare() forms it
// and the doubles on either side of it, plus the edges of the range the bands hold and unknowns.
double edge_speedup(std::mt19937_64& rng, double tolerance) {
  const double base = std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? 1.0 : 0.7;
  const double edge = (1.0 + tolerance) * base;
  const double pool[] = {base,
                         edge,
                         std::nextafter(edge, infinity),
                         std::nextafter(edge, 0.0),
                         (1.0 + tolerance) * edge,
                         not_a_number,
                         0.0,
                         -1.0,
                         -0.0,
                         infinity,
                         0x1p-30,
                         std::nextafter(0x1p-30, 0.0),
                         0x1p30 / (1.0 + tolerance),
                         std::nextafter(0x1p30 / (1.0 + tolerance), infinity),
                         std::nextafter(0x1p30, 0.0),
                         0x1p30,
                         1e-300,
                         1e300,
                         std::numeric_limits<double>::denorm_min()};
  const int pick = std::uniform_int_distribution<int>(0, 29)(rng);
  if (pick < 5) return pool[pick];  // the band edges, most often
  if (pick < 18) return pool[std::uniform_int_distribution<int>(0, 18)(rng)];
  return std::exp(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
}

Outcome edge_outcome(std::mt19937_64& rng, double tolerance, bool far_turns) {
  Outcome o;
  static const int turns[] = {0, 0, 1, 1, 2, 3, 26, 27};
  static const int far[] = {27, 28, 29, 31, 32, 1000, INT_MAX};
  o.solved_turn = turns[std::uniform_int_distribution<int>(0, 7)(rng)];
  if (far_turns && o.solved_turn > 0 && std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
    o.solved_turn = far[std::uniform_int_distribution<int>(0, 6)(rng)];
  }
  // Every verdict value, also those outside the enum (the ranking reads them as compile errors).
  const int verdict = std::uniform_int_distribution<int>(0, 5)(rng) == 0
                          ? std::uniform_int_distribution<int>(5, 255)(rng)
                          : std::uniform_int_distribution<int>(0, 4)(rng);
  o.best_verdict = static_cast<Verdict>(verdict);
  o.speedup = edge_speedup(rng, tolerance);
  static const std::uint32_t tokens[] = {0, 1, 100, 105, 106, 200, UINT32_MAX, UINT32_MAX - 1};
  o.tokens = std::uniform_int_distribution<int>(0, 2)(rng) == 0
                 ? std::uniform_int_distribution<std::uint32_t>(0, 400)(rng)
                 : tokens[std::uniform_int_distribution<int>(0, 7)(rng)];
  return o;
}

// An order with a speedup or token key (the banded kernels' orders), turn_weight 1.
KernelOrder band_order(std::mt19937_64& rng) {
  static const double speedup_tolerances[] = {-1.0, 0.0, 0.05, 0.5, 3.0};
  static const double token_tolerances[] = {-1.0, 0.0, 0.05, 1.0};
  std::uniform_int_distribution<int> coin(0, 1);
  KernelOrder order;
  do {
    order.speedup_tolerance = speedup_tolerances[std::uniform_int_distribution<int>(0, 4)(rng)];
    order.token_tolerance = token_tolerances[std::uniform_int_distribution<int>(0, 3)(rng)];
  } while (order.speedup_tolerance < 0.0 && order.token_tolerance < 0.0);
  order.by_turn = coin(rng) != 0;
  order.by_severity = coin(rng) != 0;
  order.tokens_only_when_solved = coin(rng) != 0;
  return order;
}

std::vector<Outcome> edge_group(std::mt19937_64& rng, std::size_t size, const KernelOrder& order, bool far_turns) {
  const double tolerance = order.speedup_tolerance >= 0.0 ? order.speedup_tolerance : 0.05;
  std::vector<Outcome> group(size);
  for (Outcome& o : group) o = edge_outcome(rng, tolerance, far_turns);
  return group;
}

// Sets the dispatch's test hook for a scope: with `narrow`, batches take the 16-byte kernels even
// where the CPU has AVX2 (a no-op where there are no 32-byte kernels).
struct NarrowLanes {
  explicit NarrowLanes([[maybe_unused]] bool narrow) {
#if LEAP_DETAIL_WIDE_LANES
    leap::detail::wide_lanes_off = narrow;
#endif
  }
  ~NarrowLanes() {
#if LEAP_DETAIL_WIDE_LANES
    leap::detail::wide_lanes_off = false;
#endif
  }
  NarrowLanes(const NarrowLanes&) = delete;
  NarrowLanes& operator=(const NarrowLanes&) = delete;
};

#if LEAP_DETAIL_WIDE_LANES
// Whether this machine runs AVX2, asked here rather than through the library's dispatch.
bool machine_has_avx2() { return __builtin_cpu_supports("avx2") != 0; }
#endif

}  // namespace

TEST_CASE("a band edge: within (1 + tol) ties, one ulp past it wins, in every kernel", "[rank][bands]") {
  for (const double tolerance : {0.0, 0.05, 0.5}) {
    const KernelOrder order = KernelOrder::with_speedup(tolerance);
    const double edge = (1.0 + tolerance) * 1.25;
    const double past = std::nextafter(edge, infinity);
    std::vector<Outcome> group(8);
    for (Outcome& o : group) o = Outcome{1, Verdict::correct, 1.25, 100};
    group[1].speedup = edge;                            // ties with the 1.25s
    group[2].speedup = past;                            // beats them, ties with group[1] unless tol = 0
    group[3] = Outcome{2, Verdict::correct, 100.0, 1};  // a later turn loses whatever its speed
    group[4].speedup = not_a_number;                    // unknown: loses to every success of its turn
    group[5] = Outcome{0, Verdict::wrong_answer, 1000.0, 1};
    REQUIRE(order.compare(group[2], group[0]) == 1);
    REQUIRE(order.compare(group[1], group[0]) == 0);  // exactly (1 + tol) * s: inside the band
    const auto oracle = leap::rank_advantages_reference(group, order);
    REQUIRE(leap::rank_advantages(group, order) == oracle);
    std::vector<std::uint32_t> ids(group.size(), 9);
    std::vector<double> out(group.size());
    leap::rank_advantages(group, ids, std::span<double>(out), order);  // the batch loop for groups of 8
    REQUIRE(out == oracle);
  }
}

#if LEAP_DETAIL_SIMD_LANES
TEST_CASE("banded lanes == oracle on groups full of band edges, G = 2..16", "[rank][property][bands]") {
  std::mt19937_64 rng(20261201);
  std::size_t fitted = 0;
  const std::size_t rounds = 12000;
  for (std::size_t round = 0; round < rounds; ++round) {
    const KernelOrder order = band_order(rng);
    const std::size_t size = std::uniform_int_distribution<std::size_t>(2, 16)(rng);
    const auto group = edge_group(rng, size, order, round % 4 == 0);
    const auto oracle = leap::rank_advantages_reference(group, order);
    const leap::detail::KeyEncoder encode(order);
    std::vector<double> out(size, -7.0);
    const std::span<double> view(out);
    bool took = false;
    if (size <= 4) took = leap::detail::band_lanes<2>(group, encode, view);
    else if (size <= 8) took = leap::detail::band_lanes<4>(group, encode, view);
    else if (size <= 12) took = leap::detail::band_lanes<6>(group, encode, view);
    else took = leap::detail::band_lanes<8>(group, encode, view);
    // The kernel takes exactly the groups the bands hold, and writes nothing for the others.
    REQUIRE(took == fits_bands(group, order));
    if (took) {
      ++fitted;
      REQUIRE(out == oracle);
    } else {
      for (double value : out) REQUIRE(value == -7.0);
    }
    REQUIRE(leap::rank_advantages(group, order) == oracle);  // the dispatcher, either way
  }
  REQUIRE(fitted > rounds / 4);  // the property above was tested on the banded path, not only the fallback
  REQUIRE(fitted < rounds);      // and the fallback was taken too
}

TEST_CASE("fixed-size banded kernels (each pair once) == oracle, G = 4, 8, 16, both token settings",
          "[rank][property][bands]") {
  std::mt19937_64 rng(99);
  std::size_t fitted = 0;
  for (int round = 0; round < 6000; ++round) {
    const KernelOrder order = band_order(rng);
    const leap::detail::KeyEncoder encode(order);
    const bool tokens_on = encode.tokens_solved || encode.tokens_unsolved;
    const auto check = [&]<std::size_t N>() {
      const auto group = edge_group(rng, N, order, round % 5 == 0);
      const auto oracle = leap::rank_advantages_reference(group, order);
      std::vector<double> out(N, -7.0);
      std::vector<float> out_float(N, -7.0F);
      using leap::detail::BandTokens;
      const BandTokens mode = leap::detail::band_tokens(encode);
      REQUIRE((mode == BandTokens::off) == !tokens_on);
      REQUIRE((mode == BandTokens::exact) == (tokens_on && order.token_tolerance == 0.0));  // this test's tolerances
      const bool took = mode == BandTokens::off
                            ? leap::detail::band_group_of_size<N, BandTokens::off>(group.data(), encode, out.data())
                        : mode == BandTokens::exact
                            ? leap::detail::band_group_of_size<N, BandTokens::exact>(group.data(), encode, out.data())
                            : leap::detail::band_group_of_size<N, BandTokens::banded>(group.data(), encode, out.data());
      // The banded token pass holds for every order: with the key off (NaN tokens) it only ties, and
      // with a factor of 1 its scaled counts are the counts. The same numbers, rounded to float.
      leap::detail::band_group_of_size<N, BandTokens::banded>(group.data(), encode, out_float.data());
      REQUIRE(took == fits_bands(group, order));
      if (!took) return;
      ++fitted;
      REQUIRE(out == oracle);
      for (std::size_t i = 0; i < N; ++i) REQUIRE(out_float[i] == static_cast<float>(oracle[i]));
    };
    check.template operator()<4>();
    check.template operator()<8>();
    check.template operator()<16>();
  }
  REQUIRE(fitted > 3000);
}

#if LEAP_DETAIL_WIDE_LANES
// The 32-byte kernels (AVX2) against the 16-byte ones and the oracle on the same groups: band edges,
// range edges, late turns past the bands, every token mode each order allows, float and double.
TEST_CASE("32-byte banded kernels == 16-byte kernels == oracle, G = 4, 8, 16", "[rank][property][bands][avx2]") {
  if (!machine_has_avx2()) {
    WARN("this machine has no AVX2: the 32-byte kernels are not tested here");
    return;
  }
  using leap::detail::BandTokens;
  std::mt19937_64 rng(20261204);
  std::size_t fitted = 0;
  std::size_t misfits = 0;
  for (int round = 0; round < 6000; ++round) {
    const KernelOrder order = band_order(rng);
    const leap::detail::KeyEncoder encode(order);
    const auto check = [&]<std::size_t N, BandTokens Tokens>(const std::vector<Outcome>& group) {
      const auto oracle = leap::rank_advantages_reference(group, order);
      std::vector<double> narrow(N, -7.0), wide(N, -7.0);
      std::vector<float> narrow_float(N, -7.0F), wide_float(N, -7.0F);
      const bool took_narrow = leap::detail::band_group_of_size<N, Tokens>(group.data(), encode, narrow.data());
      const bool took_wide = leap::detail::band_group_of_size_wide<N, Tokens>(group.data(), encode, wide.data());
      leap::detail::band_group_of_size<N, Tokens>(group.data(), encode, narrow_float.data());
      leap::detail::band_group_of_size_wide<N, Tokens>(group.data(), encode, wide_float.data());
      REQUIRE(took_wide == took_narrow);
      REQUIRE(took_wide == fits_bands(group, order));
      if (!took_wide) {
        ++misfits;
        for (const double value : wide) REQUIRE(value == -7.0);  // nothing written
        return;
      }
      ++fitted;
      REQUIRE(wide == narrow);
      REQUIRE(wide == oracle);
      REQUIRE(wide_float == narrow_float);
      for (std::size_t i = 0; i < N; ++i) REQUIRE(wide_float[i] == static_cast<float>(oracle[i]));
    };
    const auto sized = [&]<std::size_t N>() {
      const auto group = edge_group(rng, N, order, round % 5 == 0);
      switch (leap::detail::band_tokens(encode)) {
        case BandTokens::off: check.template operator()<N, BandTokens::off>(group); break;
        case BandTokens::exact:
          check.template operator()<N, BandTokens::exact>(group);
          check.template operator()<N, BandTokens::banded>(group);
          break;
        case BandTokens::banded: check.template operator()<N, BandTokens::banded>(group); break;
      }
    };
    sized.template operator()<4>();
    sized.template operator()<8>();
    sized.template operator()<16>();
  }
  REQUIRE(fitted > 6000);
  REQUIRE(misfits > 100);
}
#endif

// The exact token lanes (token factor 1: tolerance 0, or one too small to move 1 + tol off 1) compare
// the counts as the doubles 2^52 + t. Groups whose speeds tie, so that the counts decide, with counts
// across the whole uint32 range (0, 2^31 - 1 / 2^31 / 2^31 + 1, 2^32 - 1 and neighbours), equal counts,
// and members the token key does not cover (unsolved, when tokens_only_when_solved): the exact pass,
// the banded pass and the batch loop all give the oracle's numbers.
TEST_CASE("exact token lanes == banded lanes == oracle on counts across the uint32 range", "[rank][property][bands]") {
  std::mt19937_64 rng(20261203);
  static const std::uint32_t counts[] = {0u,          1u,          2u,          0x7FFFFFFEu, 0x7FFFFFFFu, 0x80000000u,
                                         0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu, 1000u,       1001u};
  static const double speedups[] = {1.0, 1.0, 1.04, not_a_number, 0.0, 2.0};
  using leap::detail::BandTokens;
  std::size_t exact_runs = 0;
  for (int round = 0; round < 3000; ++round) {
    const double token_tolerance = round % 3 == 2 ? 1e-17 : 0.0;  // both leave the factor at exactly 1
    KernelOrder order = KernelOrder::with_speedup_and_tokens(round % 2 == 0 ? 0.05 : 0.0, token_tolerance);
    order.tokens_only_when_solved = round % 5 != 0;
    const leap::detail::KeyEncoder encode(order);
    REQUIRE(leap::detail::band_tokens(encode) == BandTokens::exact);
    const auto check = [&]<std::size_t N>() {
      std::vector<Outcome> group(N);
      for (Outcome& o : group) {
        const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
        o.solved_turn = kind < 7 ? 1 : kind < 8 ? 2 : 0;
        o.best_verdict = o.solved_turn > 0 ? Verdict::correct : Verdict::wrong_answer;
        o.speedup = speedups[std::uniform_int_distribution<int>(0, 5)(rng)];
        o.tokens = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                       ? std::uniform_int_distribution<std::uint32_t>()(rng)
                       : counts[std::uniform_int_distribution<int>(0, 10)(rng)];
      }
      const auto oracle = leap::rank_advantages_reference(group, order);
      std::vector<double> exact(N, -7.0), banded(N, -7.0), batch(N, -7.0);
      REQUIRE(leap::detail::band_group_of_size<N, BandTokens::exact>(group.data(), encode, exact.data()));
      REQUIRE(leap::detail::band_group_of_size<N, BandTokens::banded>(group.data(), encode, banded.data()));
      REQUIRE(exact == oracle);
      REQUIRE(banded == oracle);
#if LEAP_DETAIL_WIDE_LANES
      if (machine_has_avx2()) {
        std::vector<double> wide_exact(N, -7.0), wide_banded(N, -7.0);
        REQUIRE(leap::detail::band_group_of_size_wide<N, BandTokens::exact>(group.data(), encode, wide_exact.data()));
        REQUIRE(leap::detail::band_group_of_size_wide<N, BandTokens::banded>(group.data(), encode, wide_banded.data()));
        REQUIRE(wide_exact == oracle);
        REQUIRE(wide_banded == oracle);
      }
#endif
      std::vector<std::uint32_t> ids(N, 3);
      leap::rank_advantages(group, ids, std::span<double>(batch), order);
      REQUIRE(batch == oracle);
      ++exact_runs;
    };
    check.template operator()<4>();
    check.template operator()<8>();
    check.template operator()<16>();
  }
  REQUIRE(exact_runs == 9000);
}

// The boundary of the exact token lanes: a tolerance of 2^-53 leaves 1 + tol at 1 (rounding to even),
// so the exact lanes take it; 2^-52 moves it to the next double, and the banded lanes, which form
// compare()'s products, take it. Both against the oracle on counts at the top of the range.
TEST_CASE("a token tolerance that moves the factor off 1 takes the banded lanes", "[rank][bands]") {
  using leap::detail::BandTokens;
  REQUIRE(leap::detail::band_tokens(leap::detail::KeyEncoder(KernelOrder::with_speedup_and_tokens(0.05, 0x1p-53))) ==
          BandTokens::exact);
  const KernelOrder order = KernelOrder::with_speedup_and_tokens(0.05, 0x1p-52);
  const leap::detail::KeyEncoder encode(order);
  REQUIRE(leap::detail::band_tokens(encode) == BandTokens::banded);
  REQUIRE(order.compare(Outcome{1, Verdict::correct, 1.0, 0xFFFFFFFEu},
                        Outcome{1, Verdict::correct, 1.0, 0xFFFFFFFFu}) == 1);
  REQUIRE(order.compare(Outcome{1, Verdict::correct, 1.0, 7u}, Outcome{1, Verdict::correct, 1.0, 7u}) == 0);
  std::vector<Outcome> group(8, Outcome{1, Verdict::correct, 1.0, 0xFFFFFFFFu});
  group[1].tokens = 0xFFFFFFFEu;
  group[2].tokens = 0xFFFFF000u;
  group[3].tokens = 1;
  group[4].tokens = 2;
  group[5].speedup = not_a_number;
  group[6] = Outcome{0, Verdict::wrong_answer, 1.0, 5};
  const auto oracle = leap::rank_advantages_reference(group, order);
  std::vector<double> out(8, -7.0);
  REQUIRE(leap::detail::band_group_of_size<8, BandTokens::banded>(group.data(), encode, out.data()));
  REQUIRE(out == oracle);
  std::vector<std::uint32_t> ids(8, 0);
  leap::rank_advantages(group, ids, std::span<double>(out), order);
  REQUIRE(out == oracle);
}
#endif

// The trainer's case: a batch of one group size under with_speedup / with_speedup_and_tokens, groups
// that do not fit the bands among them (a turn past 27, a speedup of 2^31, infinity or 1e-12), other
// sizes among them, and ids that are not contiguous: every group's advantages as the oracle's.
TEST_CASE("a batch under a speed order (G = 4, 5, 8, 12, 16) == oracle group by group, misfits included",
          "[rank][property][batch][bands]") {
  std::mt19937_64 rng(20261202);
  const std::size_t sizes[] = {8, 8, 4, 16, 5, 12};
  for (int round = 0; round < 300; ++round) {
    const double tolerance = std::vector<double>{0.0, 0.05, 0.5}[static_cast<std::size_t>(round % 3)];
    const KernelOrder order = round % 2 == 0
                                  ? KernelOrder::with_speedup(tolerance)
                                  : KernelOrder::with_speedup_and_tokens(tolerance, round % 4 == 1 ? 0.0 : 0.05);
    const std::size_t size = sizes[static_cast<std::size_t>(round) % 6];
    const std::size_t group_count = std::uniform_int_distribution<std::size_t>(1, 60)(rng);
    std::vector<std::vector<Outcome>> groups;
    std::vector<Outcome> results;
    std::vector<std::uint32_t> ids;
    for (std::size_t g = 0; g < group_count; ++g) {
      const bool odd = g > 0 && std::uniform_int_distribution<int>(0, 7)(rng) == 0;
      groups.push_back(
          edge_group(rng, odd ? std::uniform_int_distribution<std::size_t>(1, 17)(rng) : size, order, g % 3 == 0));
      for (const Outcome& o : groups.back()) {
        results.push_back(o);
        ids.push_back(static_cast<std::uint32_t>(1000 + g));
      }
    }
    if (round % 10 == 9 && group_count > 2) std::swap(ids.front(), ids.back());  // the gather path

    // Both batch loops where the CPU has AVX2: the 32-byte kernels, then the 16-byte ones.
    const NarrowLanes narrow((round / 4) % 2 == 1);  // independent of the order, the size and the ids
    std::vector<double> out(results.size(), -7.0);
    std::vector<float> out_float(results.size(), -7.0F);
    leap::rank_advantages(results, ids, std::span<double>(out), order);
    leap::rank_advantages(results, ids, std::span<float>(out_float), order);
    std::vector<std::vector<double>> expected(group_count);
    for (std::size_t g = 0; g < group_count; ++g) {
      std::vector<Outcome> members;
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (ids[i] == 1000 + g) members.push_back(results[i]);
      }
      expected[g] = leap::rank_advantages_reference(members, order);
    }
    std::vector<std::size_t> seen(group_count, 0);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::size_t g = ids[i] - 1000;
      const double want = expected[g][seen[g]++];
      REQUIRE(out[i] == want);
      REQUIRE(out_float[i] == static_cast<float>(want));
    }
  }
}

// Groups that do not fit are taken by the general path: one of each kind, alone in a batch of
// groups of 8, checked by hand against compare().
TEST_CASE("a batch of 8s: a turn past the bands, or a speed outside them, takes the general path", "[rank][bands]") {
  const KernelOrder order = KernelOrder::with_speedup_and_tokens(0.05, 0.0);
  for (const Outcome odd : {Outcome{28, Verdict::correct, 1.0, 10}, Outcome{INT_MAX, Verdict::correct, 1.0, 10},
                            Outcome{1, Verdict::correct, 0x1p31, 10}, Outcome{1, Verdict::correct, infinity, 10},
                            Outcome{1, Verdict::correct, 1e-12, 10}}) {
    std::vector<Outcome> results;
    for (int g = 0; g < 3; ++g) {
      for (int m = 0; m < 8; ++m) {
        results.push_back(Outcome{1 + m % 3, Verdict::correct, 1.0 + 0.1 * m, static_cast<std::uint32_t>(100 + g)});
      }
    }
    results[9] = odd;  // the second group
    REQUIRE_FALSE(fits_bands(std::vector<Outcome>(results.begin() + 8, results.begin() + 16), order));
    std::vector<std::uint32_t> ids(results.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i / 8);
    std::vector<double> out(results.size());
    leap::rank_advantages(results, ids, std::span<double>(out), order);
    for (std::size_t g = 0; g < 3; ++g) {
      const std::span<const Outcome> group(results.data() + 8 * g, 8);
      for (std::size_t i = 0; i < 8; ++i) {
        int score = 0;
        for (std::size_t j = 0; j < 8; ++j) score += order.compare(group[i], group[j]);
        REQUIRE(out[8 * g + i] == static_cast<double>(score) / 7.0);
      }
    }
  }
}

#if LEAP_DETAIL_SIMD_LANES
// The dispatch: a batch of one group size under a banded order runs the 32-byte kernels exactly where
// the CPU has AVX2 (and the test hook does not ask for the 16-byte ones), and either loop gives the
// oracle's numbers for every group size and token mode, misfits and band edges included, also when
// the run ids are not monotone (the loop then falls back to gathering the groups).
TEST_CASE("the batch loop takes the 32-byte kernels exactly where the CPU has AVX2", "[rank][bands][avx2]") {
  using leap::detail::BandLoop;
#if LEAP_DETAIL_WIDE_LANES
  const bool wide_here = machine_has_avx2();
#else
  const bool wide_here = false;
#endif
  std::mt19937_64 rng(20261205);
  constexpr std::uint32_t group_count = 24;
  for (int round = 0; round < 120; ++round) {
    const KernelOrder order = band_order(rng);
    const std::size_t size = std::size_t{4} << (round % 3);
    std::vector<Outcome> results;
    std::vector<std::uint32_t> ids;
    std::vector<std::uint32_t> shuffled_ids;  // each group still one run, the run ids out of order
    std::vector<std::vector<double>> expected;
    for (std::uint32_t g = 0; g < group_count; ++g) {
      const auto group = edge_group(rng, size, order, g % 4 == 0);
      results.insert(results.end(), group.begin(), group.end());
      ids.insert(ids.end(), size, g);
      shuffled_ids.insert(shuffled_ids.end(), size, g * 7 % group_count);
      expected.push_back(leap::rank_advantages_reference(group, order));
    }
    for (const bool narrow : {false, true}) {
      for (const auto* batch_ids : {&ids, &shuffled_ids}) {
        const NarrowLanes hook(narrow);
        leap::detail::band_loop_taken = BandLoop::none;
        std::vector<double> out(results.size(), -7.0);
        leap::rank_advantages(results, *batch_ids, std::span<double>(out), order);
        REQUIRE(leap::detail::band_loop_taken == (wide_here && !narrow ? BandLoop::wide : BandLoop::narrow));
        for (std::size_t i = 0; i < results.size(); ++i) REQUIRE(out[i] == expected[i / size][i % size]);
      }
    }
  }
}
#endif

// Unknown speed never pays: a kernel whose speedup is unknown (NaN, 0 or negative: a timing skipped,
// a run below the physical floor) would otherwise tie with every known speed of its turn, the fastest
// included. Every ranking path, at every group size that picks one, each token mode, lane width and
// turn weight, members in both orders: the unknown-speed member ranks below a 0.5x kernel of its
// turn, even with the fewest tokens, and every path gives the oracle's numbers.
TEST_CASE("unknown speed never pays: every ranking path puts an unknown speedup below every known one",
          "[rank][bands][unknown_speed]") {
  struct Setting {
    double speedup_tolerance, token_tolerance, turn_weight;
  };
  const Setting settings[] = {{0.05, -1.0, 1.0},     {0.0, -1.0, 1.0}, {0.05, 0.0, 1.0},  {0.05, 0.05, 1.0},
                              {infinity, -1.0, 1.0}, {0.5, 0.0, 1.0},  {0.05, -1.0, 0.5}, {0.05, 0.0, 0.0}};
  const std::size_t sizes[] = {2, 3, 4, 5, 8, 12, 13, 16, 17, 40, 100, 130};
  std::size_t checked = 0;
  for (const Setting& setting : settings) {
    KernelOrder order;
    order.speedup_tolerance = setting.speedup_tolerance;
    order.token_tolerance = setting.token_tolerance;
    order.turn_weight = setting.turn_weight;
    const leap::detail::KeyEncoder encode(order);
    for (const double unknown : {not_a_number, 0.0, -1.0}) {
      for (const std::size_t size : sizes) {
        for (const bool reversed : {false, true}) {
          // Member 0 hides its speed and has the fewest tokens; member 1 is an honest 0.5x kernel; the
          // rest are faster kernels of the same turn, a later turn and failures.
          std::vector<Outcome> group(size);
          group[0] = Outcome{1, Verdict::correct, unknown, 1};
          group[1] = Outcome{1, Verdict::correct, 0.5, 5000};
          for (std::size_t i = 2; i < size; ++i) {
            group[i] = i % 3 == 0   ? Outcome{2, Verdict::correct, 10.0, 100}
                       : i % 3 == 1 ? Outcome{0, Verdict::wrong_answer, not_a_number, 100}
                                    : Outcome{1, Verdict::correct, 1.0 + 0.25 * static_cast<double>(i), 200};
          }
          if (reversed) std::reverse(group.begin(), group.end());
          const std::size_t hider = reversed ? size - 1 : 0;
          const std::size_t slow = reversed ? size - 2 : 1;
          REQUIRE(order.compare(group[hider], group[slow]) == -1);
          REQUIRE(order.compare(group[slow], group[hider]) == 1);
          const auto oracle = leap::rank_advantages_reference(group, order);
          REQUIRE(oracle[hider] < oracle[slow]);

          const auto holds = [&](const std::vector<double>& got) {
            REQUIRE(got == oracle);
            ++checked;
          };
          holds(leap::rank_advantages(group, order));  // the dispatcher for one group
          for (const bool narrow : {false, true}) {    // a batch of three such groups, each lane width
            const NarrowLanes lanes(narrow);
            std::vector<Outcome> batch;
            std::vector<std::uint32_t> ids;
            for (std::uint32_t g = 0; g < 3; ++g) {
              batch.insert(batch.end(), group.begin(), group.end());
              ids.insert(ids.end(), size, g);
            }
            std::vector<double> out(batch.size());
            leap::rank_advantages(batch, ids, std::span<double>(out), order);
            for (std::size_t g = 0; g < 3; ++g)
              holds(std::vector<double>(out.begin() + g * size, out.begin() + (g + 1) * size));
          }
          if (setting.turn_weight == 1.0) {  // the paths that count every match as 1, called directly
            leap::detail::RankWorkspace workspace;
            std::vector<std::int64_t> pairwise(size), sorted(size);
            leap::detail::pairwise_scores(group, order, workspace.keys, pairwise);
            for (auto counting : {leap::detail::WindowCounting::scan, leap::detail::WindowCounting::fenwick}) {
              workspace.window_counting = counting;
              leap::detail::sorted_scores(group, order, workspace, sorted);
              REQUIRE(sorted == pairwise);
            }
            std::vector<double> from_scores(size);
            for (std::size_t i = 0; i < size; ++i)
              from_scores[i] = static_cast<double>(pairwise[i]) / static_cast<double>(size - 1);
            holds(from_scores);
          }
          std::vector<double> out(size, -7.0);
          if (size <= leap::detail::small_group_max) {
            leap::detail::small_group_advantages(group, encode, std::span<double>(out));
            holds(out);
          }
#if LEAP_DETAIL_SIMD_LANES
          if (size <= 16) {
            leap::detail::key_lanes<8>(group, encode, std::span<double>(out));
            holds(out);
          }
          if (size <= 16 && setting.turn_weight == 1.0 && fits_bands(group, order)) {
            std::fill(out.begin(), out.end(), -7.0);
            REQUIRE(leap::detail::band_lanes<8>(group, encode, std::span<double>(out)));
            holds(out);
            const auto fixed = [&]<std::size_t N>() {
              if (size != N) return;
              using leap::detail::BandTokens;
              const auto each_mode = [&]<BandTokens Tokens>() {
                std::vector<double> lanes(N, -7.0);
                REQUIRE(leap::detail::band_group_of_size<N, Tokens>(group.data(), encode, lanes.data()));
                holds(lanes);
#if LEAP_DETAIL_WIDE_LANES
                if (machine_has_avx2()) {
                  std::vector<double> wide(N, -7.0);
                  REQUIRE(leap::detail::band_group_of_size_wide<N, Tokens>(group.data(), encode, wide.data()));
                  holds(wide);
                }
#endif
              };
              switch (leap::detail::band_tokens(encode)) {
                case BandTokens::off: each_mode.template operator()<BandTokens::off>(); break;
                case BandTokens::exact:
                  each_mode.template operator()<BandTokens::exact>();
                  each_mode.template operator()<BandTokens::banded>();
                  break;
                case BandTokens::banded: each_mode.template operator()<BandTokens::banded>(); break;
              }
            };
            fixed.template operator()<4>();
            fixed.template operator()<8>();
            fixed.template operator()<16>();
          }
#endif
        }
      }
    }
  }
  REQUIRE(checked > 1000);
}
