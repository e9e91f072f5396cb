// SPDX-License-Identifier: Apache-2.0
// Computing one group's Copeland scores (wins - losses). Internal: not part of the API.
//
// KernelOrder is first encoded into three numbers per outcome (encode_keys) so that a match needs
// no branches:
//   class    the exact keys (solved, turn, severity) as one integer: higher class beats lower
//   speedup  NaN where the key is off (NaN compares false, so: a tie); where it is on, the speedup
//            as KernelOrder::known_speedup gives it, 0 when unknown (below every known one)
//   tokens   NaN where the token key does not apply to this outcome's class
// and a match is: the class if it differs, else the speedup band, else the token band, each written
// with exactly the expressions of KernelOrder::compare so the results agree bit for bit.
// KeyEncoder also holds the table of the banded keys, which fold the class and the speedup band into
// one double per side for groups of up to 16 (detail/rank_lanes.hpp, where they are described).
//
// pairwise: every pair once over the keys, O(G^2). Used below pairwise_crossover.
// sorted:   O(G log G), exact even where tolerance bands make ties non-transitive:
//   1. Classes are totally ordered, so sorting by class gives each member
//      (members in worse classes) - (members in better classes).
//   2. Inside a class only the speedup band and the token band remain. Every known speedup beats
//      every unknown one (the key is on or off for a whole class; off, all are unknown and tie).
//      With known speedups sorted, the members a beats on speedup form a prefix and those that beat
//      it a suffix; the members tied with it on speedup form the window between (two pointers find
//      all windows in one sweep). The token key decides exactly the ties: among unknown-speedup
//      members by binary search in their sorted token counts; against the window by scanning it
//      when the windows are short (a narrow band, the usual case), else offline, with a Fenwick tree
//      over token ranks while sweeping the speedup order.
// turn_weight w < 1: the paths above count every match as 1. The matches decided by the turn (both
// solved, different turns) contribute T_i = (solved later than i) - (solved earlier than i) to that
// count, and are worth w instead, so each path ends with
//   advantage_i = ((S_i - T_i) + w * T_i) / (G - 1)
// in that order of operations (turn_scores and weighted_advantage below); for w = 1 it is S_i / (G - 1).
// Custom orders use pairwise_advantages_full, the definition itself.
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "leap/detail/select.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"

namespace leap::detail {

// Below this group size the pairwise loop beats sorting (measured with bench_advantages:
// BM_rank_pairwise vs BM_rank_sorted).
inline constexpr std::size_t pairwise_crossover = 96;

// Every ordered pair, exactly the definition: score_i = sum over j != i of the match's value
// (order.match where the order has it, else the sign of order.compare). Writes score_i / (G - 1).
template <class Real, class Order>
void pairwise_advantages_full(std::span<const Outcome> group, const Order& order, std::span<Real> out) {
  const double opponents = static_cast<double>(group.size() - 1);
  for (std::size_t i = 0; i < group.size(); ++i) {
    double score = 0.0;
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (i != j) score += match_value(order, group[i], group[j]);
    }
    out[i] = static_cast<Real>(score / opponents);
  }
}

// One member's advantage from its unweighted score and the part of it the turn decided.
inline double weighted_advantage(std::int64_t score, std::int64_t turn_score, double turn_weight,
                                 double opponents) noexcept {
  return (static_cast<double>(score - turn_score) + turn_weight * static_cast<double>(turn_score)) / opponents;
}

// T_i of the file comment for every member: (solved later) - (solved earlier) for a solved member,
// 0 for an unsolved one. O(G log G) by binary search in the sorted solved turns.
inline void turn_scores(std::span<const Outcome> group, std::vector<int>& solved_turns, std::span<std::int64_t> out) {
  solved_turns.clear();
  for (const Outcome& o : group) {
    if (o.solved_turn > 0) solved_turns.push_back(o.solved_turn);
  }
  std::sort(solved_turns.begin(), solved_turns.end());
  for (std::size_t i = 0; i < group.size(); ++i) {
    const int turn = group[i].solved_turn;
    if (turn <= 0) {
      out[i] = 0;
      continue;
    }
    const auto earlier = std::lower_bound(solved_turns.begin(), solved_turns.end(), turn) - solved_turns.begin();
    const auto later = solved_turns.end() - std::upper_bound(solved_turns.begin(), solved_turns.end(), turn);
    out[i] = static_cast<std::int64_t>(later) - static_cast<std::int64_t>(earlier);
  }
}

// The branch-free keys of a group under one KernelOrder (see the file comment).
struct OrderKeys {
  std::vector<double> klass;  // exact: every class value is below 2^42
  std::vector<double> speedup;
  std::vector<double> tokens;
  std::vector<double> speedup_scaled;  // KernelOrder::scaled_speedup of speedup, for the pairwise loop
  std::vector<double> tokens_scaled;   // token_factor * tokens, likewise
  std::vector<double> score;           // the pairwise loop's running scores
  double speedup_factor = 1.0;         // 1 + speedup_tolerance
  double token_factor = 1.0;           // 1 + token_tolerance
};

inline constexpr double solved_class_base = 1099511627776.0;  // 2^40, above every unsolved class

// Encodes one outcome's keys without branches: outcomes arrive in random order, so a branch on
// "solved?" would mispredict about every other time. Choices are bit masks over the doubles.
struct KeyEncoder {
  double by_turn, by_severity;
  bool speedup_on, tokens_solved, tokens_unsolved;
  double speedup_factor, token_factor;
  bool turn_weighted;  // some matches are worth turn_weight rather than 1
  double turn_weight;
  bool class_only;  // no speedup or token key: the class alone decides (KernelOrder{})

  explicit KeyEncoder(const KernelOrder& order)
      : by_turn(order.by_turn ? 1.0 : 0.0),
        by_severity(order.by_severity ? 1.0 : 0.0),
        speedup_on(order.speedup_key_on()),
        tokens_solved(order.token_key_on(true)),
        tokens_unsolved(order.token_key_on(false)),
        speedup_factor(1.0 + order.speedup_tolerance),
        token_factor(1.0 + order.token_tolerance),
        turn_weighted(order.turn_weighted()),
        turn_weight(order.turn_weight),
        class_only(!order.speedup_key_on() && !(order.token_tolerance >= 0.0)) {
    build_band_table();
  }

  // The banded keys' table (detail/rank_lanes.hpp), by band_index: the power of two that places the
  // outcome's class in its band (NaN: a solved turn past band_max_turn under by_turn, which the bands
  // cannot hold), and whether the speedup and token keys apply to that class (0 or NaN, added to the
  // value: adding 0 is exact, adding NaN makes it unknown, one vector add where a mask blend is three).
  static constexpr std::size_t band_entries = 38;  // solved: min(turn, 31); unsolved: 32 + min(verdict, 5)
  static constexpr int band_max_turn = 27;         // under by_turn, turns 1..27 take class indices 30..4
  double band_scale[band_entries];
  double band_speedup_off[band_entries];  // 0 where the speedup key applies, NaN (added: unknown) where not
  double band_tokens_off[band_entries];   // likewise for the token key

  static std::size_t band_index(const Outcome& o) noexcept {
    const auto turn = static_cast<std::uint32_t>(o.solved_turn);  // >= 0, validated by every caller
    const std::uint32_t solved = turn != 0 ? ~0u : 0u;
    const std::uint32_t unsolved_index =
        32u + std::min(static_cast<std::uint32_t>(o.best_verdict), 5u);  // see severity
    return (std::min(turn, 31u) & solved) | (unsolved_index & ~solved);
  }

 private:
  void build_band_table() noexcept {
    const auto scale_of = [](int band) {  // 2^(64 band - 960): class index 0..30 -> 2^-960 .. 2^960
      return std::bit_cast<double>(static_cast<std::uint64_t>(64 * band + 63) << 52);
    };
    for (std::size_t index = 0; index < band_entries; ++index) {
      const bool solved = index >= 1 && index < 32;
      int band = 0;
      if (solved) {
        band = by_turn != 0.0 ? 31 - static_cast<int>(index) : 4;
      } else if (index >= 32) {
        band = static_cast<int>(by_severity * severity(static_cast<Verdict>(index - 32)));
      }
      const bool fits = !solved || by_turn == 0.0 || static_cast<int>(index) <= band_max_turn;
      band_scale[index] = fits ? scale_of(band) : std::numeric_limits<double>::quiet_NaN();
      const double off = std::numeric_limits<double>::quiet_NaN();
      band_speedup_off[index] = solved && speedup_on ? 0.0 : off;
      band_tokens_off[index] = (solved ? tokens_solved : tokens_unsolved) ? 0.0 : off;
    }
  }

 public:
  static double severity(Verdict verdict) noexcept {
    // By the enum's value, see failure_severity_rank; any value past the enum reads as the last entry,
    // 0, as failure_severity_rank's fall-through gives it (a mask would wrap 9 to 1).
    static constexpr double rank[6] = {0, 1, 1, 2, 3, 0};
    return rank[std::min(static_cast<unsigned>(verdict), 5u)];
  }
  // condition ? a : b, as a bit blend (detail/select.hpp).
  static constexpr double select(bool condition, double a, double b) noexcept {
    return detail::select(condition, a, b);
  }

  double klass(const Outcome& o) const noexcept {
    const double solved_class = solved_class_base + by_turn * static_cast<double>(INT_MAX - o.solved_turn);
    const double failed_class = by_severity * severity(o.best_verdict);
    return select(o.solved_turn > 0, solved_class, failed_class);
  }
  // NaN where the key does not apply (a tie with the whole class), else KernelOrder::known_speedup.
  double speedup(const Outcome& o) const noexcept {
    const bool applies = (o.solved_turn > 0) & speedup_on;
    const double known = select(o.speedup > 0.0, o.speedup, 0.0);
    return select(applies, known, std::numeric_limits<double>::quiet_NaN());
  }
  // KernelOrder::scaled_speedup of an encoded speedup: (1 + tol) * s when known, else s itself.
  double speedup_scaled(double speedup) const noexcept {
    return select(speedup > 0.0, speedup_factor * speedup, speedup);
  }
  double tokens(const Outcome& o) const noexcept {
    const bool solved = o.solved_turn > 0;
    const bool on = (solved & tokens_solved) | (!solved & tokens_unsolved);
    return select(on, static_cast<double>(o.tokens), std::numeric_limits<double>::quiet_NaN());
  }
};
static_assert(failure_severity_rank(Verdict::compile_error) == 0 &&
                  failure_severity_rank(Verdict::runtime_error) == 1 && failure_severity_rank(Verdict::timeout) == 1 &&
                  failure_severity_rank(Verdict::wrong_answer) == 2,
              "KeyEncoder::severity's table must follow failure_severity_rank");

inline void encode_keys(std::span<const Outcome> group, const KernelOrder& order, OrderKeys& keys) {
  const std::size_t n = group.size();
  const KeyEncoder encode(order);
  keys.klass.resize(n);
  keys.speedup.resize(n);
  keys.tokens.resize(n);
  keys.speedup_factor = encode.speedup_factor;
  keys.token_factor = encode.token_factor;
  for (std::size_t i = 0; i < n; ++i) {
    keys.klass[i] = encode.klass(group[i]);
    keys.speedup[i] = encode.speedup(group[i]);
    keys.tokens[i] = encode.tokens(group[i]);
  }
}

// Groups up to this size are scored entirely on the stack; above it the vectorised pass over
// encoded keys wins (measured on groups of 4 to 32: the two meet near G = 12).
inline constexpr std::size_t small_group_max = 12;

// Each pair once, scalar and branch-free; writes score / (n - 1) as Real. For n <= small_group_max.
template <class Real>
void small_group_advantages(std::span<const Outcome> group, const KeyEncoder& encode, std::span<Real> out) {
  struct Key {
    double klass, speedup, speedup_scaled, tokens, tokens_scaled;
  };
  Key keys[small_group_max];
  const std::size_t n = group.size();
  for (std::size_t i = 0; i < n; ++i) {
    const double speedup = encode.speedup(group[i]);
    const double tokens = encode.tokens(group[i]);
    keys[i] = {encode.klass(group[i]), speedup, encode.speedup_scaled(speedup), tokens, encode.token_factor * tokens};
  }
  int score[small_group_max];
  for (std::size_t i = 0; i < n; ++i) score[i] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Key a = keys[i];
    int score_a = 0;
    for (std::size_t j = i + 1; j < n; ++j) {
      const Key& b = keys[j];
      const int by_class = static_cast<int>(a.klass > b.klass) - static_cast<int>(a.klass < b.klass);
      const int by_speed =
          static_cast<int>(a.speedup > b.speedup_scaled) - static_cast<int>(b.speedup > a.speedup_scaled);
      const int by_tokens = static_cast<int>(b.tokens > a.tokens_scaled) - static_cast<int>(a.tokens > b.tokens_scaled);
      // The first decisive key, in arithmetic rather than branches: a key of 0 passes to the next.
      const int tie_break = by_speed + static_cast<int>(by_speed == 0) * by_tokens;
      const int result = by_class + static_cast<int>(by_class == 0) * tie_break;
      score_a += result;
      score[j] -= result;
    }
    score[i] += score_a;
  }
  const double opponents = static_cast<double>(n - 1);
  if (!encode.turn_weighted) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Real>(static_cast<double>(score[i]) / opponents);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {  // the matches the turn decided, each pair once
    const int turn_i = group[i].solved_turn;
    std::int64_t turn_score = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const int turn_j = group[j].solved_turn;
      if (turn_i > 0 && turn_j > 0) turn_score += static_cast<int>(turn_i < turn_j) - static_cast<int>(turn_i > turn_j);
    }
    out[i] = static_cast<Real>(weighted_advantage(score[i], turn_score, encode.turn_weight, opponents));
  }
}

// Each pair once over the keys. The inner loop is branch-free and its iterations independent
// (a's running score, and b's score in its own slot), so compilers vectorise it even for baseline
// x86-64 (SSE2). The scaled keys (factor * key) are the very products compare() forms.
inline void pairwise_scores(OrderKeys& keys, std::span<std::int64_t> scores) {
  const std::size_t n = keys.klass.size();
  keys.speedup_scaled.resize(n);
  keys.tokens_scaled.resize(n);
  keys.score.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    keys.speedup_scaled[i] = KernelOrder::scaled_speedup(keys.speedup[i], keys.speedup_factor);
    keys.tokens_scaled[i] = keys.token_factor * keys.tokens[i];
  }
  const double* klass = keys.klass.data();
  const double* speed = keys.speedup.data();
  const double* speed_scaled = keys.speedup_scaled.data();
  const double* tokens = keys.tokens.data();
  const double* tokens_scaled = keys.tokens_scaled.data();
  double* score = keys.score.data();
  for (std::size_t i = 0; i < n; ++i) {
    const double ci = klass[i];
    const double si = speed[i];
    const double si_scaled = speed_scaled[i];
    const double ti = tokens[i];
    const double ti_scaled = tokens_scaled[i];
    double score_i = 0.0;
    for (std::size_t j = i + 1; j < n; ++j) {
      const double by_class = static_cast<double>(ci > klass[j]) - static_cast<double>(ci < klass[j]);
      const double by_speed = static_cast<double>(si > speed_scaled[j]) - static_cast<double>(speed[j] > si_scaled);
      const double by_tokens = static_cast<double>(tokens[j] > ti_scaled) - static_cast<double>(ti > tokens_scaled[j]);
      const double tie_break = by_speed != 0.0 ? by_speed : by_tokens;  // selects, which vectorise
      const double result = by_class != 0.0 ? by_class : tie_break;
      score_i += result;
      score[j] -= result;
    }
    score[i] += score_i;
  }
  for (std::size_t i = 0; i < n; ++i) scores[i] = static_cast<std::int64_t>(score[i]);
}

inline void pairwise_scores(std::span<const Outcome> group, const KernelOrder& order, OrderKeys& keys,
                            std::span<std::int64_t> scores) {
  encode_keys(group, order, keys);
  pairwise_scores(keys, scores);
}

// How the sorted path counts token matches inside speedup windows. automatic picks by the windows'
// total length; the other two exist so that tests can hold both methods to the oracle.
enum class WindowCounting { automatic, scan, fenwick };

// Reusable buffers, so a batch of many groups allocates once.
struct RankWorkspace {
  WindowCounting window_counting = WindowCounting::automatic;
  KeyEncoder encoder{KernelOrder{}};       // the batch's order, encoded once for the small-group pass
  std::vector<std::int64_t> scores;        // one group's Copeland scores, every match worth 1
  std::vector<std::int64_t> turn_decided;  // the part of them the turn decided (turn_weight < 1)
  std::vector<int> solved_turns;           // sorted, for turn_scores
  std::vector<double> tokens_by_speed;     // tokens of the known members, in speedup order
  OrderKeys keys;
  std::vector<std::pair<double, std::uint32_t>> by_class;    // (class, member), ascending
  std::vector<std::uint32_t> class_members;                  // the class being scored
  std::vector<std::pair<double, std::uint32_t>> by_speedup;  // (speedup, member), known only, ascending
  std::vector<std::uint32_t> unknown_speed;                  // members with unknown speedup (or key off)
  std::vector<double> tokens_unknown;                        // their sorted token counts
  std::vector<std::pair<double, std::uint32_t>> by_tokens;   // (tokens, speedup position), known only
  std::vector<std::uint32_t> window_lo, window_hi;           // by speedup position
  std::vector<std::uint32_t> token_rank;                     // by speedup position
  std::vector<std::uint32_t> limit_more, limit_fewer;        // by speedup position, see below
  std::vector<std::uint32_t> fenwick;
  std::vector<std::uint32_t> query_start, query_fill;
  struct Query {
    std::uint32_t rank_limit;  // counts inserted members with token rank < rank_limit
    std::uint32_t member;
    std::int32_t sign;
  };
  std::vector<Query> queries;
};

// Members of `sorted` (ascending token counts) that a (with t_a tokens) beats minus those beating it.
inline std::int64_t token_score_against(std::span<const double> sorted, double t_a, double factor) {
  const auto first_more =
      std::partition_point(sorted.begin(), sorted.end(), [&](double t) { return t <= factor * t_a; });
  const auto first_not_fewer =
      std::partition_point(sorted.begin(), sorted.end(), [&](double t) { return factor * t < t_a; });
  return static_cast<std::int64_t>(sorted.end() - first_more) -
         static_cast<std::int64_t>(first_not_fewer - sorted.begin());
}

// Within one class (members equal on the exact keys): adds the speedup and token scores.
inline void within_class_scores(std::span<const std::uint32_t> members, RankWorkspace& ws,
                                std::span<std::int64_t> scores) {
  const OrderKeys& keys = ws.keys;
  const double fs = keys.speedup_factor;
  const double ft = keys.token_factor;
  const bool tokens_on = !std::isnan(keys.tokens[members.front()]);  // uniform within a class

  ws.by_speedup.clear();
  ws.unknown_speed.clear();
  for (std::uint32_t m : members) {
    if (keys.speedup[m] > 0.0) {
      ws.by_speedup.emplace_back(keys.speedup[m], m);
    } else {
      ws.unknown_speed.push_back(m);  // 0: unknown; NaN: the key is off for the class (then all are)
    }
  }
  const std::size_t known = ws.by_speedup.size();
  const auto unknown = static_cast<std::int64_t>(ws.unknown_speed.size());
  // Every known speedup beats every unknown one (KernelOrder::compare_speedups).
  for (std::uint32_t m : ws.unknown_speed) scores[m] -= static_cast<std::int64_t>(known);
  if (known == 0 && !tokens_on) return;
  std::sort(ws.by_speedup.begin(), ws.by_speedup.end());

  // Speedup windows by two pointers: both ends only move right as the speedup grows. Known speedups
  // are positive, so fs * s is compare()'s product.
  ws.window_lo.resize(known);
  ws.window_hi.resize(known);
  for (std::size_t k = 0, lo = 0, hi = 0; k < known; ++k) {
    const double s_a = ws.by_speedup[k].first;
    while (lo < known && fs * ws.by_speedup[lo].first < s_a) ++lo;
    while (hi < known && ws.by_speedup[hi].first <= fs * s_a) ++hi;
    ws.window_lo[k] = static_cast<std::uint32_t>(lo);
    ws.window_hi[k] = static_cast<std::uint32_t>(hi);
    scores[ws.by_speedup[k].second] += static_cast<std::int64_t>(lo) - static_cast<std::int64_t>(known - hi) + unknown;
  }
  if (!tokens_on) return;

  // Unknown speedups tie each other on speed: tokens decide among them.
  if (unknown > 0) {
    ws.tokens_unknown.clear();
    for (std::uint32_t m : ws.unknown_speed) ws.tokens_unknown.push_back(keys.tokens[m]);
    std::sort(ws.tokens_unknown.begin(), ws.tokens_unknown.end());
    for (std::uint32_t m : ws.unknown_speed) scores[m] += token_score_against(ws.tokens_unknown, keys.tokens[m], ft);
  }
  if (known == 0) return;

  // Against the members tied on speedup, the window [lo, hi). A narrow band makes windows short, and
  // then scanning them beats any index; wide or crowded bands take the Fenwick sweep below, which
  // keeps the worst case at O(n log n).
  std::size_t window_total = 0;
  for (std::size_t k = 0; k < known; ++k) window_total += ws.window_hi[k] - ws.window_lo[k];
  const std::size_t log_known = static_cast<std::size_t>(std::bit_width(known));
  const bool scan = ws.window_counting == WindowCounting::scan ||
                    (ws.window_counting == WindowCounting::automatic && window_total <= 8 * known * log_known);
  if (scan) {
    ws.tokens_by_speed.resize(known);
    for (std::size_t k = 0; k < known; ++k) ws.tokens_by_speed[k] = keys.tokens[ws.by_speedup[k].second];
    const double* tokens = ws.tokens_by_speed.data();
    for (std::size_t k = 0; k < known; ++k) {
      const double t_a = tokens[k];
      const double t_a_scaled = ft * t_a;
      std::int64_t score = 0;
      for (std::size_t j = ws.window_lo[k]; j < ws.window_hi[k]; ++j) {
        score += static_cast<std::int64_t>(tokens[j] > t_a_scaled) - static_cast<std::int64_t>(t_a > ft * tokens[j]);
      }
      scores[ws.by_speedup[k].second] += score;
    }
    return;
  }

  // Known speedups in token order. Walking it, the thresholds only move right, so two pointers give
  // each member a's token-rank limits among known members: ranks >= limit_more hold more than
  // ft * t_a tokens, ranks < limit_fewer hold t with ft * t < t_a.
  ws.by_tokens.resize(known);
  for (std::size_t k = 0; k < known; ++k)
    ws.by_tokens[k] = {keys.tokens[ws.by_speedup[k].second], static_cast<std::uint32_t>(k)};
  std::sort(ws.by_tokens.begin(), ws.by_tokens.end());
  ws.token_rank.resize(known);
  ws.limit_more.resize(known);
  ws.limit_fewer.resize(known);
  for (std::size_t r = 0, more = 0, fewer = 0; r < known; ++r) {
    const double t_a = ws.by_tokens[r].first;
    while (more < known && ws.by_tokens[more].first <= ft * t_a) ++more;
    while (fewer < known && ft * ws.by_tokens[fewer].first < t_a) ++fewer;
    const std::uint32_t k = ws.by_tokens[r].second;
    ws.token_rank[k] = static_cast<std::uint32_t>(r);
    ws.limit_more[k] = static_cast<std::uint32_t>(more);
    ws.limit_fewer[k] = static_cast<std::uint32_t>(fewer);
  }

  // Against the window [lo, hi): with Q(P, r) = members among the first P of the speedup order whose
  // token rank is < r, the score is (hi - lo) - Q(hi, more) + Q(lo, more) - Q(hi, fewer) + Q(lo, fewer).
  // Queries are bucketed by P, then answered in one sweep that inserts members in speedup order.
  ws.query_start.assign(known + 2, 0);
  for (std::size_t k = 0; k < known; ++k) {
    ws.query_start[ws.window_lo[k] + 1] += 2;
    ws.query_start[ws.window_hi[k] + 1] += 2;
    scores[ws.by_speedup[k].second] += static_cast<std::int64_t>(ws.window_hi[k] - ws.window_lo[k]);
  }
  for (std::size_t p = 1; p < ws.query_start.size(); ++p) ws.query_start[p] += ws.query_start[p - 1];
  ws.query_fill.assign(ws.query_start.begin(), ws.query_start.end() - 1);
  ws.queries.resize(4 * known);
  for (std::size_t k = 0; k < known; ++k) {
    const std::uint32_t m = ws.by_speedup[k].second;
    ws.queries[ws.query_fill[ws.window_lo[k]]++] = {ws.limit_more[k], m, +1};
    ws.queries[ws.query_fill[ws.window_lo[k]]++] = {ws.limit_fewer[k], m, +1};
    ws.queries[ws.query_fill[ws.window_hi[k]]++] = {ws.limit_more[k], m, -1};
    ws.queries[ws.query_fill[ws.window_hi[k]]++] = {ws.limit_fewer[k], m, -1};
  }
  ws.fenwick.assign(known + 1, 0);
  for (std::size_t p = 0; p <= known; ++p) {
    for (std::uint32_t q = ws.query_start[p]; q < ws.query_start[p + 1]; ++q) {
      const auto& query = ws.queries[q];
      std::int64_t below = 0;
      for (std::size_t i = query.rank_limit; i > 0; i &= i - 1) below += ws.fenwick[i];
      scores[query.member] += query.sign * below;
    }
    if (p < known) {
      for (std::size_t i = ws.token_rank[p] + 1; i <= known; i += i & (~i + 1)) ++ws.fenwick[i];
    }
  }
}

// Sorted path for KernelOrder; see the file comment.
inline void sorted_scores(std::span<const Outcome> group, const KernelOrder& order, RankWorkspace& ws,
                          std::span<std::int64_t> scores) {
  encode_keys(group, order, ws.keys);
  const std::size_t n = group.size();
  ws.by_class.resize(n);
  for (std::size_t i = 0; i < n; ++i) ws.by_class[i] = {ws.keys.klass[i], static_cast<std::uint32_t>(i)};
  std::sort(ws.by_class.begin(), ws.by_class.end());

  std::vector<std::uint32_t>& class_members = ws.class_members;
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin + 1;
    while (end < n && ws.by_class[end].first == ws.by_class[begin].first) ++end;
    const auto below = static_cast<std::int64_t>(begin);
    const auto above = static_cast<std::int64_t>(n - end);
    class_members.clear();
    for (std::size_t k = begin; k < end; ++k) {
      class_members.push_back(ws.by_class[k].second);
      scores[ws.by_class[k].second] = below - above;
    }
    within_class_scores(class_members, ws, scores);
    begin = end;
  }
}

}  // namespace leap::detail
