// SPDX-License-Identifier: Apache-2.0
// Scoring a whole group of up to 16 outcomes in SIMD lanes, one lane per member. Internal.
//
// Every member's keys sit in one vector (padded to 4, 8 or 16 lanes); for each member i the pass
// compares i's keys, broadcast, against the whole vector and adds each lane's result of the match to
// that lane's running score. That is G vector steps of a few instructions, with no branch and no
// horizontal sum; the lanes past G carry zeros that no one reads. A member's match with itself is a
// tie under every key (equal class; x > (1 + tol) * x is false for tol >= 0, and NaN and 0 are not
// above themselves), so it adds 0.
//
// Written with the vector lanes of simd_lanes.hpp. Other compilers use the scalar
// small_group_advantages (rank_kernels.hpp); tests hold both to the oracle.
//
// Three kernels:
//   class_lanes   orders with neither speedup nor token key (KernelOrder{}, LEAP as published):
//                 the match is decided by the class alone, held as a 32-bit integer (class32 below)
//   band_lanes    a speedup or token key with every match worth 1 (with_speedup, with_speedup_and_
//                 tokens): the class and the speedup band folded into one double per side by
//                 power-of-two scaling ("banded keys" below), so a match is two double compares, and
//                 the token key's two more where those tie. Exact: the scaling is exact and the
//                 compares are compare()'s own products. Groups the bands cannot hold (a solved turn
//                 past 27, a known speedup outside [2^-30, 2^30]) are refused, and take:
//   key_lanes     the speedup and token keys as they are, in double lanes with the very products
//                 compare() forms, so results agree with it bit for bit; used for 12 < G <= 16 with
//                 turn_weight < 1 or a group that does not fit the bands (below, the scalar pass
//                 that plays each pair once is faster)
// class_group_of_size and band_group_of_size run those passes for a group of exactly 4, 8 or 16
// members, the size known to the compiler: the loop of a trainer's batch, whose groups have one size
// (rank_advantage.hpp picks it). Both read each advantage from a table of score / (G - 1); the banded
// one plays each pair once (a triangle of vector steps).
// band_group_wide is band_group_of_size in 32-byte vectors, four members a vector, each pair once by
// rotating lanes (6 vector steps for G = 8 where the 16-byte triangle takes 16, and half the vector
// operations to encode the keys). x86-64 only, compiled for AVX2 by the target attribute and run only
// where the CPU has it (wide_lanes_available(), asked once): the library is header-only and must not
// need -mavx2, so the 16-byte kernels stay for other CPUs and targets, and the scalar pass for other
// compilers. The same keys, compares and integer scores, so the same bits; tests hold the two to each
// other and to the oracle where the machine has AVX2.
// class_lanes and key_lanes also count T_j, the part of the score the turn decided (matches between
// members solved at different turns), for turn_weight < 1: advantage_j = ((S_j - T_j) + w * T_j) /
// (G - 1) as in weighted_advantage. The banded keys do not, so turn-weighted orders with a speedup
// or token key take key_lanes or the scalar pass.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "leap/detail/rank_kernels.hpp"
#include "leap/detail/simd_lanes.hpp"
#include "leap/outcome.hpp"

namespace leap::detail {

// The class of KernelOrder's exact keys as one signed 32-bit integer, higher wins, solved >= 0 >
// unsolved: INT_MAX - solved_turn when solved and by_turn (solved_turn >= 1, so >= 0), 0 when solved
// and not by_turn, INT_MIN + severity rank (when by_severity) when unsolved. Needs solved_turn >= 0,
// which every ranking path validates first.
inline std::int32_t class32(const Outcome& o, const KeyEncoder& encode) noexcept {
  const std::int32_t solved = -static_cast<std::int32_t>(o.solved_turn > 0);       // all ones when solved
  const std::int32_t by_turn = -static_cast<std::int32_t>(encode.by_turn != 0.0);  // all ones when by_turn
  const std::int32_t solved_class = (INT_MAX - o.solved_turn) & by_turn;
  const std::int32_t failed_class =
      INT_MIN + static_cast<std::int32_t>(encode.by_severity * KeyEncoder::severity(o.best_verdict));
  return (solved_class & solved) | (failed_class & ~solved);
}

#if LEAP_DETAIL_SIMD_LANES
inline constexpr bool lane_kernels_available = true;

// A group is K vectors side by side. Only operations with a baseline instruction are used: 32-bit
// integer compares, double compares, and and/or/andnot/add/sub on 64-bit lanes (no 64-bit integer
// compare, which SSE2 lacks).

// Writes the advantages from the per-lane scores S and turn-decided parts T.
template <class Real, class Int>
void write_lane_advantages(const Int* score, const Int* turn, std::size_t n, const KeyEncoder& encode,
                           std::span<Real> out) noexcept {
  const double opponents = static_cast<double>(n - 1);
  if (!encode.turn_weighted) {
    for (std::size_t j = 0; j < n; ++j) out[j] = static_cast<Real>(static_cast<double>(score[j]) / opponents);
    return;
  }
  for (std::size_t j = 0; j < n; ++j) {
    out[j] = static_cast<Real>(weighted_advantage(static_cast<std::int64_t>(score[j]),
                                                  static_cast<std::int64_t>(turn[j]), encode.turn_weight, opponents));
  }
}

// The class alone decides; K vectors of 4 int32 lanes hold up to 4K members. Writes each lane's
// score S_j and, when Turns, its turn-decided part T_j (lanes past n hold 0).
template <std::size_t K, bool Turns>
[[gnu::always_inline]] inline void class_lane_scores(const Outcome* group, std::size_t n, const KeyEncoder& encode,
                                                     std::int32_t* score_out, std::int32_t* turn_out) noexcept {
  constexpr std::size_t lanes = 4 * K;
  alignas(16) std::int32_t klass[lanes] = {};
  for (std::size_t i = 0; i < n; ++i) klass[i] = class32(group[i], encode);
  lanes_i32 c[K];
  std::memcpy(c, klass, sizeof c);
  const lanes_i32 zero = {};
  lanes_i32 score[K] = {};
  lanes_i32 turn[K] = {};
  for (std::size_t i = 0; i < n; ++i) {
    const lanes_i32 ci = zero + klass[i];
    const lanes_i32 solved_i = zero + ~(klass[i] >> 31);  // all ones when i is solved (class >= 0)
    for (std::size_t k = 0; k < K; ++k) {
      const lanes_i32 step = (c[k] < ci) - (c[k] > ci);  // masks are -1: +1 where lane j beats i
      score[k] += step;
      if constexpr (Turns) turn[k] += step & solved_i;
    }
  }
  std::memcpy(score_out, score, sizeof score);
  if constexpr (Turns) {
    for (std::size_t k = 0; k < K; ++k) turn[k] &= (c[k] >= zero);  // T_j counts for solved j only
    std::memcpy(turn_out, turn, sizeof turn);
  }
}

template <std::size_t K, class Real>
void class_lanes(std::span<const Outcome> group, const KeyEncoder& encode, std::span<Real> out) noexcept {
  alignas(16) std::int32_t score[4 * K];
  alignas(16) std::int32_t turn[4 * K];
  class_lane_scores<K, true>(group.data(), group.size(), encode, score, turn);
  write_lane_advantages(score, turn, group.size(), encode, out);
}

// S / (N - 1) for every score S a member of a group of N can reach, -(N - 1)..N - 1: the division
// write_lane_advantages does for each member, done once (IEEE division is correctly rounded, so
// the results are the same bits).
template <std::size_t N>
struct ScoreAdvantages {
  double of[2 * N - 1] = {};
  constexpr ScoreAdvantages() {
    for (std::size_t k = 0; k < 2 * N - 1; ++k) {
      of[k] = static_cast<double>(static_cast<int>(k) - static_cast<int>(N - 1)) / static_cast<double>(N - 1);
    }
  }
  constexpr double operator()(std::int32_t score) const noexcept {
    return of[score + static_cast<std::int32_t>(N - 1)];
  }
};

// weighted_advantage(S, T, w, N - 1) for every score S and turn-decided part T a member of a group
// of N can reach (each in -(N - 1)..N - 1): the turn-weighted counterpart of ScoreAdvantages, built
// for one batch since w is a run-time value. Worth building when the batch has a few times more
// members than the table has entries.
template <std::size_t N>
struct WeightedAdvantages {
  static constexpr std::size_t side = 2 * N - 1;
  static constexpr std::size_t entries = side * side;
  double of[entries];

  explicit WeightedAdvantages(double turn_weight) noexcept {
    const auto reach = static_cast<std::int64_t>(N - 1);
    for (std::int64_t score = -reach; score <= reach; ++score) {
      for (std::int64_t turn = -reach; turn <= reach; ++turn) {
        of[static_cast<std::size_t>((score + reach) * static_cast<std::int64_t>(side) + turn + reach)] =
            weighted_advantage(score, turn, turn_weight, static_cast<double>(N - 1));
      }
    }
  }
  double operator()(std::int32_t score, std::int32_t turn) const noexcept {
    const auto reach = static_cast<std::int32_t>(N - 1);
    return of[static_cast<std::size_t>((score + reach) * static_cast<std::int32_t>(side) + turn + reach)];
  }
};

// A group of exactly N members (4, 8 or 16) under a class-only order, with N known to the compiler:
// the batch loop of a trainer's batch, whose groups all have one size. With turn_weight < 1 the
// advantages come from `weighted` when the batch built it, else as write_lane_advantages computes them.
template <std::size_t N, class Real>
void class_group_of_size(const Outcome* group, const KeyEncoder& encode, Real* out,
                         const WeightedAdvantages<N>* weighted = nullptr) noexcept {
  static_assert(N % 4 == 0 && N <= 16, "one to four whole vectors");
  alignas(16) std::int32_t score[N];
  alignas(16) std::int32_t turn[N];
  if (!encode.turn_weighted) {
    static constexpr ScoreAdvantages<N> advantage{};
    class_lane_scores<N / 4, false>(group, N, encode, score, turn);
    for (std::size_t j = 0; j < N; ++j) out[j] = static_cast<Real>(advantage(score[j]));
    return;
  }
  class_lane_scores<N / 4, true>(group, N, encode, score, turn);
  if (weighted != nullptr) {
    for (std::size_t j = 0; j < N; ++j) out[j] = static_cast<Real>((*weighted)(score[j], turn[j]));
    return;
  }
  write_lane_advantages(score, turn, N, encode, std::span<Real>(out, N));
}

// Speedup and token keys too; K vectors of 2 double lanes hold up to 2K members. The class is the
// double of encode_keys (exact: below 2^42), so all compares are double compares.
template <std::size_t K, class Real>
void key_lanes(std::span<const Outcome> group, const KeyEncoder& encode, std::span<Real> out) noexcept {
  constexpr std::size_t lanes = 2 * K;
  const std::size_t n = group.size();
  alignas(16) double klass[lanes] = {};
  alignas(16) double speed[lanes] = {};
  alignas(16) double speed_scaled[lanes] = {};
  alignas(16) double tokens[lanes] = {};
  alignas(16) double tokens_scaled[lanes] = {};
  for (std::size_t i = 0; i < n; ++i) {
    klass[i] = encode.klass(group[i]);
    speed[i] = encode.speedup(group[i]);
    speed_scaled[i] = encode.speedup_scaled(speed[i]);
    tokens[i] = encode.tokens(group[i]);
    tokens_scaled[i] = encode.token_factor * tokens[i];
  }
  lanes_f64 c[K], s[K], s_scaled[K], t[K], t_scaled[K];
  std::memcpy(c, klass, sizeof c);
  std::memcpy(s, speed, sizeof s);
  std::memcpy(s_scaled, speed_scaled, sizeof s_scaled);
  std::memcpy(t, tokens, sizeof t);
  std::memcpy(t_scaled, tokens_scaled, sizeof t_scaled);
  const lanes_f64 zero_f = {};
  const lanes_i64 zero = {};
  lanes_i64 score[K] = {};
  lanes_i64 turn[K] = {};
  for (std::size_t i = 0; i < n; ++i) {
    const lanes_f64 ci = zero_f + klass[i];
    const lanes_f64 si = zero_f + speed[i];
    const lanes_f64 si_scaled = zero_f + speed_scaled[i];
    const lanes_f64 ti = zero_f + tokens[i];
    const lanes_f64 ti_scaled = zero_f + tokens_scaled[i];
    const lanes_i64 solved_i = zero - static_cast<std::int64_t>(klass[i] >= solved_class_base);
    for (std::size_t k = 0; k < K; ++k) {
      // Lane j's view, masks -1 where true. j beats i on speed when s_j > f * s_i, on tokens when
      // t_i > f * t_j; the two masks of a key are never both set, so key = win_mask - lose_mask and
      // (win | lose) says whether the key decided.
      const lanes_i64 class_lose = c[k]<ci, class_win = c[k]> ci;
      const lanes_i64 speed_win = s[k] > si_scaled, speed_lose = s_scaled[k] < si;
      const lanes_i64 token_win = t_scaled[k]<ti, token_lose = t[k]> ti_scaled;
      const lanes_i64 by_class = class_lose - class_win;
      const lanes_i64 by_speed = speed_lose - speed_win;
      const lanes_i64 by_tokens = token_lose - token_win;
      const lanes_i64 tie_break = by_speed | (~(speed_win | speed_lose) & by_tokens);  // the first decisive key
      score[k] += by_class | (~(class_win | class_lose) & tie_break);
      turn[k] += by_class & solved_i;  // both solved at different turns: the class decided it
    }
  }
  const lanes_f64 solved_base = zero_f + solved_class_base;
  for (std::size_t k = 0; k < K; ++k) turn[k] &= (c[k] >= solved_base);
  alignas(16) std::int64_t score_out[lanes];
  alignas(16) std::int64_t turn_out[lanes];
  std::memcpy(score_out, score, sizeof score);
  std::memcpy(turn_out, turn, sizeof turn);
  write_lane_advantages(score_out, turn_out, n, encode, out);
}

// ---- Banded keys: the class and the speedup band in one double compare ---------------------------
//
// A member i gets two doubles, a win key W_i and a threshold H_i, such that "i beats j on the class
// or, within one class, on the speedup band" is exactly W_i > H_j. Each class owns a band of
// exponents: the class's index b (0..30, higher beats lower) scales by 2^(64 b - 960), an exact
// power of two. A known speedup s (solved, key on, s > 0) gives W = s * 2^(..) and H = ((1 + tol) * s)
// * 2^(..), the very product compare() forms, scaled; an unknown one (and every member of a class
// the key does not apply to) gives W = H = 2^-31 * 2^(..): below every known speedup's keys, so it
// loses to each of them and ties with every other unknown, as compare() has it. Since known s and
// (1 + tol) * s lie in [2^-30, 2^30] (checked), the bands do not overlap: the lowest key of band
// b + 1 exceeds the highest threshold of band b by 2^3, so a better class always wins, and inside a
// class the scaling cancels (multiplying by a power of two is exact away from overflow and
// subnormals: every key lies in [2^-991, 2^990]).
// Class indices: an unsolved member takes its severity rank (0..3; 0 without by_severity), a solved
// one 4 without by_turn, else 31 - solved_turn for turns 1..27 (KeyEncoder's band table). A group
// with a later solved turn or a known speedup outside the range does not fit: the banded kernels
// return false without writing, and the caller takes the kernels that compare keys as they are.
//
// Then score_j = #{i : W_j > H_i} - #{i : W_i > H_j}: two compares per member pair, the same work as
// the class-only kernel in double lanes. The token key, when on, decides the pairs where neither
// compare holds (same class, speed tied), in the same pass. A member never beats itself (s <= (1 +
// tol) * s, and an unknown's two keys are equal), so padding and the diagonal add nothing.

inline constexpr double band_speed_low = 0x1p-30;      // a known speedup must be >= this
inline constexpr double band_speed_high = 0x1p30;      // and its threshold (1 + tol) * s <= this
inline constexpr double band_speed_unknown = 0x1p-31;  // both keys of an unknown one: below every known

// The banded keys of members a and b, one per lane, as four vectors (win key, threshold, tokens,
// tokens scaled); `misfit` gets all ones in a lane whose member does not fit the bands. Two members
// at a time so that the choices are lane masks rather than branches or scalar bit juggling.
struct BandPair {
  lanes_f64 win, threshold, tokens, tokens_scaled;
};

// Token counts as doubles without a conversion instruction: a count t < 2^32 in the low bits of 2^52
// reads as the double 2^52 + t exactly, and subtracting 2^52 leaves t exactly. The first alone orders
// the counts as they are, which is all the exact token key (factor 1) needs.
inline constexpr std::uint64_t token_bias_bits = 0x4330000000000000;  // the double 2^52

template <bool BiasedTokens = false>
[[gnu::always_inline]] inline BandPair band_pair(const Outcome& a, const Outcome& b, const KeyEncoder& encode,
                                                 lanes_i64& misfit) noexcept {
  const std::size_t ia = KeyEncoder::band_index(a);
  const std::size_t ib = KeyEncoder::band_index(b);
  const lanes_f64 zero = {};
  const lanes_f64 scale = {encode.band_scale[ia], encode.band_scale[ib]};
  // NaN where the key does not apply to the class; then NaN, 0 or negative all mean unknown.
  const lanes_f64 speedup =
      lanes_f64{a.speedup, b.speedup} + lanes_f64{encode.band_speedup_off[ia], encode.band_speedup_off[ib]};
  const lanes_f64 threshold = encode.speedup_factor * speedup;  // compare()'s (1 + tol) * s
  const lanes_i64 known = speedup > zero;
  const auto blend = [](lanes_i64 mask, lanes_f64 yes, lanes_f64 no) {
    return reinterpret_cast<lanes_f64>((reinterpret_cast<lanes_i64>(yes) & mask) |
                                       (reinterpret_cast<lanes_i64>(no) & ~mask));
  };
  // Unknown: 2^-31 for both keys, equal to every other unknown's and below both keys of every known
  // speedup (s >= 2^-30 and (1 + tol) s >= s): the known one wins, the unknown never does. A known
  // speedup out of range shows by leaving [2^-30, 2^30].
  const lanes_f64 win = blend(known, speedup, zero + band_speed_unknown);
  const lanes_f64 high = blend(known, threshold, zero + band_speed_unknown);
  misfit |= ((win < zero + band_speed_low) & known) | (high > zero + band_speed_high) | (scale != scale);
  const lanes_i64 token_bits = lanes_i64{static_cast<std::int64_t>(a.tokens), static_cast<std::int64_t>(b.tokens)} |
                               static_cast<std::int64_t>(token_bias_bits);
  lanes_f64 tokens = reinterpret_cast<lanes_f64>(token_bits);  // 2^52 + t
  if constexpr (!BiasedTokens) tokens -= zero + 0x1p52;        // t, exactly
  tokens += lanes_f64{encode.band_tokens_off[ia], encode.band_tokens_off[ib]};
  return {win * scale, high * scale, tokens, encode.token_factor * tokens};
}

// Whether some lane of a mask is set: one or across the lanes, then one scalar test (reading the two
// lanes apart lets the compiler test each pair of members as it goes).
[[gnu::always_inline]] inline bool any_lane(lanes_i64 mask) noexcept {
  return (mask | __builtin_shufflevector(mask, mask, 1, 0))[0] != 0;
}

// The banded pass over the first n <= 2K members: writes each lane's score (wins - losses, every
// match worth 1) and returns true, or returns false having written nothing when the group does not
// fit the bands. Tokens: whether the token key is on for some class (off, it would only tie).
template <std::size_t K, bool Tokens>
[[gnu::always_inline]] inline bool band_lane_scores(const Outcome* group, std::size_t n, const KeyEncoder& encode,
                                                    lanes_i64* score) noexcept {
  constexpr std::size_t lanes = 2 * K;
  // Members in pairs; an odd last member is paired with itself (the copy lands in a padding lane,
  // which no one reads). Lanes past that hold zeros: they are never an opponent (i < n below).
  lanes_f64 w[K] = {}, h[K] = {}, t[K] = {}, t_scaled[K] = {};
  lanes_i64 misfit = {};
  for (std::size_t k = 0; 2 * k < n; ++k) {
    const std::size_t i = 2 * k;
    const BandPair pair = band_pair(group[i], group[i + 1 < n ? i + 1 : i], encode, misfit);
    w[k] = pair.win;
    h[k] = pair.threshold;
    t[k] = pair.tokens;
    t_scaled[k] = pair.tokens_scaled;
  }
  if (any_lane(misfit)) [[unlikely]]
    return false;
  alignas(16) double win[lanes], threshold[lanes];  // the same keys, for broadcasting member i's
  std::memcpy(win, w, sizeof w);
  std::memcpy(threshold, h, sizeof h);
  const lanes_f64 zero = {};
  for (std::size_t k = 0; k < K; ++k) score[k] = lanes_i64{};
  if constexpr (!Tokens) {
    for (std::size_t i = 0; i < n; ++i) {
      const lanes_f64 wi = zero + win[i];
      const lanes_f64 hi = zero + threshold[i];
      for (std::size_t k = 0; k < K; ++k)
        score[k] += (h[k] < wi) - (w[k] > hi);  // masks are -1: +1 where lane j beats i
    }
  } else {
    alignas(16) double tokens[lanes], tokens_scaled[lanes];
    std::memcpy(tokens, t, sizeof t);
    std::memcpy(tokens_scaled, t_scaled, sizeof t_scaled);
    for (std::size_t i = 0; i < n; ++i) {
      const lanes_f64 wi = zero + win[i];
      const lanes_f64 hi = zero + threshold[i];
      const lanes_f64 ti = zero + tokens[i];
      const lanes_f64 ti_scaled = zero + tokens_scaled[i];
      for (std::size_t k = 0; k < K; ++k) {
        const lanes_i64 beats = w[k] > hi, beaten = h[k] < wi;  // class or speed: lane j beats i, i beats j
        const lanes_i64 token_beats = t_scaled[k]<ti, token_beaten = t[k]> ti_scaled;       // fewer tokens win
        score[k] += (beaten - beats) | (~(beats | beaten) & (token_beaten - token_beats));  // tokens only on a tie
      }
    }
  }
  return true;
}

// How the fixed-size banded pass plays the token key: off (no class has it: it would only tie), exact
// (token_factor == 1, tolerance 0 or below half an ulp of 1: compare()'s product (1 + tol) * t is t
// itself, so the counts are compared as they are, one key per side) or banded (the scaled counts
// too, compare()'s products, as band_lane_scores does).
enum class BandTokens : unsigned char { off, exact, banded };

inline BandTokens band_tokens(const KeyEncoder& encode) noexcept {
  if (!encode.tokens_solved && !encode.tokens_unsolved) return BandTokens::off;
  return encode.token_factor == 1.0 ? BandTokens::exact : BandTokens::banded;
}

// Lane `lane` (0 or 1, known to the compiler once the loops are unrolled) of v in both lanes: one
// unpack, where broadcasting a scalar through memory is a load, an unpack and, written `zero + x`,
// an add (which the compiler keeps: 0.0 + -0.0 is +0.0).
[[gnu::always_inline]] inline lanes_f64 splat(lanes_f64 v, std::size_t lane) noexcept {
  return lane == 0 ? __builtin_shufflevector(v, v, 0, 0) : __builtin_shufflevector(v, v, 1, 1);
}

// The token order on a group of exactly N members, N known to the compiler: each pair once. Member i
// meets only the lanes after it (from its own vector when i is even, whose lane i is i itself and
// ties; from the next when i is odd, the lane before having met it already); the lanes' results
// add to their scores as above, and their sum, negated, to i's. Half the vector steps of the square
// pass: the token key's match costs ten vector operations where the class and speed alone cost
// four, so halving the steps pays there. Member i's keys are broadcast from the key vectors
// themselves. Writes the K score vectors, each lane holding its score plus N - 1 (in 0..2N - 2: the
// index of ScoreAdvantages' table, so that reading it needs no sign extension or offset).
template <std::size_t N, BandTokens Tokens>
[[gnu::always_inline]] inline bool band_triangle(const Outcome* group, const KeyEncoder& encode,
                                                 lanes_i64* score) noexcept {
  constexpr std::size_t K = N / 2;
  constexpr bool tokens_on = Tokens != BandTokens::off;
  constexpr bool scaled = Tokens == BandTokens::banded;
  lanes_f64 w[K], h[K], t[K], t_scaled[K];
  lanes_i64 misfit = {};
  for (std::size_t k = 0; k < K; ++k) {
    const BandPair pair = band_pair<Tokens == BandTokens::exact>(group[2 * k], group[2 * k + 1], encode, misfit);
    w[k] = pair.win;
    h[k] = pair.threshold;
    t[k] = pair.tokens;  // exact: 2^52 + t, which orders as t does (the factor is 1, the product t)
    t_scaled[k] = scaled ? pair.tokens_scaled : pair.tokens;
  }
  if (any_lane(misfit)) [[unlikely]]
    return false;
  lanes_i64 against[N];  // against[i]: lane sums of the results of i's matches (+1 where the lane won)
  for (std::size_t k = 0; k < K; ++k) score[k] = lanes_i64{} + static_cast<std::int64_t>(N - 1);  // see below
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    const lanes_f64 wi = splat(w[i / 2], i % 2);
    const lanes_f64 hi = splat(h[i / 2], i % 2);
    const lanes_f64 ti = splat(t[i / 2], i % 2);
    const lanes_f64 ti_scaled = scaled ? splat(t_scaled[i / 2], i % 2) : ti;
    lanes_i64 against_i = {};
#pragma GCC unroll 8
    for (std::size_t k = (i + 1) / 2; k < K; ++k) {
      const lanes_i64 beats = w[k] > hi, beaten = h[k] < wi;
      lanes_i64 result = beaten - beats;
      if constexpr (tokens_on) {
        const lanes_i64 token_beats = t_scaled[k]<ti, token_beaten = t[k]> ti_scaled;
        result |= ~(beats | beaten) & (token_beaten - token_beats);
      }
      score[k] += result;
      against_i += result;
    }
    against[i] = against_i;
  }
  // Member i loses what its opponents won: subtract the horizontal sums, two members per vector
  // (lane 0 of {a_i[0] + a_i[1], a_i+1[0] + a_i+1[1]} is i's), without leaving the vector registers.
  for (std::size_t k = 0; k < K; ++k) {
    const lanes_i64 a = against[2 * k];
    const lanes_i64 b = against[2 * k + 1];
    score[k] -= __builtin_shufflevector(a, b, 0, 2) + __builtin_shufflevector(a, b, 1, 3);
  }
  return true;
}

// score / (N - 1) for the N / 2 vectors of scores of a group of N, each lane holding its score plus
// N - 1 (band_triangle), read from ScoreAdvantages' table (the same bits as dividing: a division per
// pair of members costs more than the loads).
template <std::size_t N, class Real>
[[gnu::always_inline]] inline void write_score_vectors(const lanes_i64* score, Real* out) noexcept {
  static constexpr ScoreAdvantages<N> advantage{};
  for (std::size_t k = 0; k < N / 2; ++k) {
    out[2 * k] = static_cast<Real>(advantage.of[static_cast<std::uint64_t>(score[k][0])]);
    out[2 * k + 1] = static_cast<Real>(advantage.of[static_cast<std::uint64_t>(score[k][1])]);
  }
}

template <std::size_t K>
bool band_lane_scores(const Outcome* group, std::size_t n, const KeyEncoder& encode, lanes_i64* score) noexcept {
  return encode.tokens_solved || encode.tokens_unsolved ? band_lane_scores<K, true>(group, n, encode, score)
                                                        : band_lane_scores<K, false>(group, n, encode, score);
}

// One group of 2..2K members under an order with a speedup or token key and turn_weight = 1; false,
// having written nothing, when it does not fit the bands.
template <std::size_t K, class Real>
bool band_lanes(std::span<const Outcome> group, const KeyEncoder& encode, std::span<Real> out) noexcept {
  lanes_i64 score[K];
  if (!band_lane_scores<K>(group.data(), group.size(), encode, score)) return false;
  alignas(16) std::int64_t scores[2 * K];
  std::memcpy(scores, score, sizeof score);
  write_lane_advantages(scores, scores, group.size(), encode, out);
  return true;
}

// A group of exactly N members (4, 8 or 16), N known to the compiler, Tokens fixed for the batch, each
// advantage read from a table (see class_group_of_size). False, having written nothing, when the
// group does not fit the bands.
template <std::size_t N, BandTokens Tokens, class Real>
bool band_group_of_size(const Outcome* group, const KeyEncoder& encode, Real* out) noexcept {
  static_assert(N % 4 == 0 && N <= 16, "whole vectors");
  lanes_i64 score[N / 2];
  if (!band_triangle<N, Tokens>(group, encode, score)) return false;
  write_score_vectors<N>(score, out);
  return true;
}

// Which batch loop the last batch of one group size under a banded order took on this thread: the
// 16-byte kernels or the 32-byte ones. Written once per batch, read by the tests of the dispatch.
enum class BandLoop : unsigned char { none, narrow, wide };
inline thread_local BandLoop band_loop_taken = BandLoop::none;

#if LEAP_DETAIL_WIDE_LANES
// ---- The fixed-size banded pass in 32-byte lanes (AVX2, chosen at run time) ----------------------
//
// Four members per vector: a group of N is N / 4 vectors of keys. Each pair is played once by
// rotating lanes instead of broadcasting members: vector k against itself rotated by 1 and by 2
// (lane l meets l + 1 and l + 2; what l won against l + 1 is what l + 1 lost against l, so rotating
// that result by 3 gives every lane its match against l - 1), and against each later vector m
// rotated by 0..3 (the result, rotated back, subtracted from m's lanes). For N = 8 that is 8 vector
// steps of four lanes and no horizontal sum, where the 16-byte triangle takes 16 of two lanes and
// then sums across lanes; the keys of four members are encoded in one set of vector operations. Same
// keys, compares and integer scores as band_triangle, so the same bits.

// Test hook: true makes the batch loop take the 16-byte kernels even where AVX2 is available.
inline std::atomic<bool> wide_lanes_off{false};

// Whether the batch loop runs the 32-byte kernels: the CPU has AVX2 and no test asked otherwise.
inline bool wide_lanes_available() noexcept {
  return cpu_has_avx2() && !wide_lanes_off.load(std::memory_order_relaxed);
}

struct WideKeys {
  wide_f64 win, threshold, tokens, tokens_scaled;
};

// Lane l of the result is lane (l + R) % 4 of v.
template <int R, class V>
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline V rotate_lanes(V v) noexcept {
  return __builtin_shufflevector(v, v, R % 4, (R + 1) % 4, (R + 2) % 4, (R + 3) % 4);
}

template <int R, BandTokens Tokens>
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline WideKeys rotate_keys(const WideKeys& keys) noexcept {
  const wide_f64 tokens = rotate_lanes<R>(keys.tokens);
  return {rotate_lanes<R>(keys.win), rotate_lanes<R>(keys.threshold), tokens,
          Tokens == BandTokens::banded ? rotate_lanes<R>(keys.tokens_scaled) : tokens};
}

// mask ? yes : no, lane by lane (a function, not a lambda: GCC compiles a lambda's conversion to a
// function pointer for the baseline target, and warns of the ABI).
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline wide_f64 wide_blend(wide_i64 mask, wide_f64 yes,
                                                                          wide_f64 no) noexcept {
  return reinterpret_cast<wide_f64>((reinterpret_cast<wide_i64>(yes) & mask) |
                                    (reinterpret_cast<wide_i64>(no) & ~mask));
}

// band_pair for four members (see there).
template <BandTokens Tokens>
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline WideKeys wide_keys(const Outcome* m, const KeyEncoder& encode,
                                                                         wide_i64& misfit) noexcept {
  const std::size_t i0 = KeyEncoder::band_index(m[0]), i1 = KeyEncoder::band_index(m[1]);
  const std::size_t i2 = KeyEncoder::band_index(m[2]), i3 = KeyEncoder::band_index(m[3]);
  const wide_f64 zero = {};
  const wide_f64 scale = {encode.band_scale[i0], encode.band_scale[i1], encode.band_scale[i2], encode.band_scale[i3]};
  const wide_f64 speedup = wide_f64{m[0].speedup, m[1].speedup, m[2].speedup, m[3].speedup} +
                           wide_f64{encode.band_speedup_off[i0], encode.band_speedup_off[i1],
                                    encode.band_speedup_off[i2], encode.band_speedup_off[i3]};
  const wide_f64 threshold = encode.speedup_factor * speedup;
  const wide_i64 known = speedup > zero;
  const wide_f64 win = wide_blend(known, speedup, zero + band_speed_unknown);
  const wide_f64 high = wide_blend(known, threshold, zero + band_speed_unknown);
  misfit |= ((win < zero + band_speed_low) & known) | (high > zero + band_speed_high) | (scale != scale);
  const wide_i64 token_bits = wide_i64{static_cast<std::int64_t>(m[0].tokens), static_cast<std::int64_t>(m[1].tokens),
                                       static_cast<std::int64_t>(m[2].tokens), static_cast<std::int64_t>(m[3].tokens)} |
                              static_cast<std::int64_t>(token_bias_bits);
  wide_f64 tokens = reinterpret_cast<wide_f64>(token_bits);            // 2^52 + t
  if constexpr (Tokens != BandTokens::exact) tokens -= zero + 0x1p52;  // t, exactly
  tokens += wide_f64{encode.band_tokens_off[i0], encode.band_tokens_off[i1], encode.band_tokens_off[i2],
                     encode.band_tokens_off[i3]};
  return {win * scale, high * scale, tokens, Tokens == BandTokens::banded ? encode.token_factor * tokens : tokens};
}

// Lane l: +1 where member j (lane l of `j`) beats member i (lane l of `i`), -1 where it loses, as in
// band_triangle.
template <BandTokens Tokens>
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline wide_i64 wide_match(const WideKeys& j,
                                                                          const WideKeys& i) noexcept {
  const wide_i64 beats = j.win > i.threshold, beaten = j.threshold < i.win;
  wide_i64 result = beaten - beats;
  if constexpr (Tokens != BandTokens::off) {
    const wide_i64 token_beats = j.tokens_scaled < i.tokens;  // fewer tokens win
    const wide_i64 token_beaten = j.tokens > i.tokens_scaled;
    result |= ~(beats | beaten) & (token_beaten - token_beats);
  }
  return result;
}

// Writes the N / 4 score vectors of a group of exactly N (lanes hold the score plus N - 1), or
// returns false having written nothing when the group does not fit the bands.
template <std::size_t N, BandTokens Tokens>
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline bool band_wide_scores(const Outcome* group,
                                                                            const KeyEncoder& encode,
                                                                            wide_i64* score) noexcept {
  constexpr std::size_t K = N / 4;
  WideKeys keys[K];
  wide_i64 misfit = {};
  for (std::size_t k = 0; k < K; ++k) keys[k] = wide_keys<Tokens>(group + 4 * k, encode, misfit);
  const wide_i64 folded = misfit | __builtin_shufflevector(misfit, misfit, 2, 3, 0, 1);
  if ((folded | __builtin_shufflevector(folded, folded, 1, 0, 3, 2))[0] != 0) [[unlikely]]
    return false;
  for (std::size_t k = 0; k < K; ++k) score[k] = wide_i64{} + static_cast<std::int64_t>(N - 1);
#pragma GCC unroll 4
  for (std::size_t k = 0; k < K; ++k) {
    const wide_i64 next = wide_match<Tokens>(keys[k], rotate_keys<1, Tokens>(keys[k]));  // l against l + 1
    score[k] += next + wide_match<Tokens>(keys[k], rotate_keys<2, Tokens>(keys[k])) - rotate_lanes<3>(next);
#pragma GCC unroll 4
    for (std::size_t m = k + 1; m < K; ++m) {
      const wide_i64 r0 = wide_match<Tokens>(keys[k], keys[m]);
      const wide_i64 r1 = wide_match<Tokens>(keys[k], rotate_keys<1, Tokens>(keys[m]));
      const wide_i64 r2 = wide_match<Tokens>(keys[k], rotate_keys<2, Tokens>(keys[m]));
      const wide_i64 r3 = wide_match<Tokens>(keys[k], rotate_keys<3, Tokens>(keys[m]));
      score[k] += (r0 + r1) + (r2 + r3);
      score[m] -= (r0 + rotate_lanes<3>(r1)) + (rotate_lanes<2>(r2) + rotate_lanes<1>(r3));
    }
  }
  return true;
}

// band_group_of_size in 32-byte lanes. The advantage score / (N - 1) is divided in the lanes: the
// score plus N - 1 in the low bits of 2^52, less 2^52 + N - 1, is the score as a double exactly, and
// IEEE division gives ScoreAdvantages' bits.
template <std::size_t N, BandTokens Tokens, class Real>
[[gnu::always_inline]] LEAP_DETAIL_TARGET_AVX2 inline bool band_group_wide(const Outcome* group,
                                                                           const KeyEncoder& encode,
                                                                           Real* out) noexcept {
  static_assert(N % 4 == 0 && N <= 16, "whole vectors");
  wide_i64 score[N / 4];
  if (!band_wide_scores<N, Tokens>(group, encode, score)) return false;
  const wide_f64 zero = {};
  for (std::size_t k = 0; k < N / 4; ++k) {
    const wide_f64 biased = reinterpret_cast<wide_f64>(score[k] | static_cast<std::int64_t>(token_bias_bits));
    const wide_f64 advantage = (biased - (zero + (0x1p52 + static_cast<double>(N - 1)))) / static_cast<double>(N - 1);
    if constexpr (std::is_same_v<Real, double>) {
      std::memcpy(out + 4 * k, &advantage, sizeof advantage);
    } else {
      typedef float wide_f32 __attribute__((vector_size(16)));
      const wide_f32 narrow = __builtin_convertvector(advantage, wide_f32);
      std::memcpy(out + 4 * k, &narrow, sizeof narrow);
    }
  }
  return true;
}

// band_group_wide as a function of its own, for calls from baseline code (the tests): the batch loop
// inlines band_group_wide itself.
template <std::size_t N, BandTokens Tokens, class Real>
LEAP_DETAIL_TARGET_AVX2 bool band_group_of_size_wide(const Outcome* group, const KeyEncoder& encode,
                                                     Real* out) noexcept {
  return band_group_wide<N, Tokens>(group, encode, out);
}
#endif

// Scores one group of 2..16 members in lanes; see the file comment.
template <class Real>
void lane_group_advantages(std::span<const Outcome> group, const KeyEncoder& encode, std::span<Real> out) noexcept {
  const std::size_t n = group.size();
  if (encode.class_only) {
    if (n <= 4) return class_lanes<1>(group, encode, out);
    if (n <= 8) return class_lanes<2>(group, encode, out);
    if (n <= 12) return class_lanes<3>(group, encode, out);
    return class_lanes<4>(group, encode, out);
  }
  // With speedup or tokens and every match worth 1, the banded keys when the group fits them.
  if (!encode.turn_weighted) {
    if (n <= 4 && band_lanes<2>(group, encode, out)) return;
    if (n > 4 && n <= 8 && band_lanes<4>(group, encode, out)) return;
    if (n > 8 && n <= 12 && band_lanes<6>(group, encode, out)) return;
    if (n > 12 && band_lanes<8>(group, encode, out)) return;
  }
  // Otherwise each pair once in scalar code beats all pairs in 2-lane vectors up to small_group_max
  // (measured on bench_advantages' batch at G = 8: 16.8 against 17.8 ns per result).
  if (n <= small_group_max) return small_group_advantages(group, encode, out);
  return key_lanes<8>(group, encode, out);
}

// The largest group the lane kernels take.
inline constexpr std::size_t lane_group_max = 16;
#else
inline constexpr bool lane_kernels_available = false;
inline constexpr std::size_t lane_group_max = small_group_max;

template <class Real>
void lane_group_advantages(std::span<const Outcome> group, const KeyEncoder& encode, std::span<Real> out) noexcept {
  small_group_advantages(group, encode, out);  // no vector extensions: the scalar pass
}
#endif

}  // namespace leap::detail
