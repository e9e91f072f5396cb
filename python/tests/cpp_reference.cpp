// SPDX-License-Identifier: Apache-2.0
// The C++ side of the Python tests' bit-for-bit comparisons: reads a batch written by the test, runs
// the core's functions on it directly, and writes their outputs.
//
//   leap_python_cpp_reference IN OUT by_turn by_severity speedup_tol token_tol tokens_only_when_solved
//                             score_tolerance epsilon turn_weight
// IN:  uint64 n; int32 solved_turn[n]; uint8 verdict[n]; float64 speedup[n]; uint32 tokens[n];
//      uint32 group_ids[n]; float64 rewards[n]
// OUT: float64 rank[n], of_scores[n], grpo[n], dr_grpo[n], rloo[n]; float32 rank[n], of_scores[n],
//      grpo[n], rloo[n] (the float32 ones on the rewards rounded to float)
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"

namespace {

template <class T>
std::vector<T> read_column(std::ifstream& in, std::size_t n) {
  std::vector<T> column(n);
  in.read(reinterpret_cast<char*>(column.data()), static_cast<std::streamsize>(n * sizeof(T)));
  return column;
}

template <class T>
void write_column(std::ofstream& out, const std::vector<T>& column) {
  out.write(reinterpret_cast<const char*>(column.data()), static_cast<std::streamsize>(column.size() * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 11) {
    std::cerr << "usage: leap_python_cpp_reference IN OUT by_turn by_severity speedup_tol token_tol "
                 "tokens_only_when_solved score_tolerance epsilon turn_weight\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::uint64_t n64 = 0;
  in.read(reinterpret_cast<char*>(&n64), sizeof n64);
  const auto n = static_cast<std::size_t>(n64);
  const auto turns = read_column<std::int32_t>(in, n);
  const auto verdicts = read_column<std::uint8_t>(in, n);
  const auto speedups = read_column<double>(in, n);
  const auto tokens = read_column<std::uint32_t>(in, n);
  const auto ids = read_column<std::uint32_t>(in, n);
  const auto rewards = read_column<double>(in, n);
  if (!in) {
    std::cerr << "leap_python_cpp_reference: " << argv[1] << " is shorter than its header says\n";
    return 2;
  }

  std::vector<leap::Outcome> results(n);
  for (std::size_t i = 0; i < n; ++i) {
    results[i] = leap::Outcome{turns[i], static_cast<leap::Verdict>(verdicts[i]), speedups[i], tokens[i]};
  }
  leap::KernelOrder order;
  order.by_turn = std::string(argv[3]) == "1";
  order.by_severity = std::string(argv[4]) == "1";
  order.speedup_tolerance = std::strtod(argv[5], nullptr);
  order.token_tolerance = std::strtod(argv[6], nullptr);
  order.tokens_only_when_solved = std::string(argv[7]) == "1";
  order.turn_weight = std::strtod(argv[10], nullptr);
  const double score_tolerance = std::strtod(argv[8], nullptr);
  const leap::GrpoOptions grpo{std::strtod(argv[9], nullptr), true};
  const leap::GrpoOptions dr_grpo{grpo.epsilon, false};

  std::vector<double> rank(n), of_scores(n), z(n), centred(n), rloo(n);
  leap::rank_advantages(results, ids, std::span<double>(rank), order);
  leap::rank_advantages_of_scores(rewards, ids, of_scores, score_tolerance);
  leap::grpo_advantages(rewards, ids, z, grpo);
  leap::grpo_advantages(rewards, ids, centred, dr_grpo);
  leap::rloo_advantages(rewards, ids, rloo);

  const std::vector<float> rewards_f(rewards.begin(), rewards.end());
  std::vector<float> rank_f(n), of_scores_f(n), z_f(n), rloo_f(n);
  leap::rank_advantages(results, ids, std::span<float>(rank_f), order);
  leap::rank_advantages_of_scores(rewards_f, ids, of_scores_f, score_tolerance);
  leap::grpo_advantages(rewards_f, ids, z_f, grpo);
  leap::rloo_advantages(rewards_f, ids, rloo_f);

  std::ofstream out(argv[2], std::ios::binary);
  for (const auto* column : {&rank, &of_scores, &z, &centred, &rloo}) write_column(out, *column);
  for (const auto* column : {&rank_f, &of_scores_f, &z_f, &rloo_f}) write_column(out, *column);
  return out ? 0 : 1;
}
