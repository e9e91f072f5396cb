// SPDX-License-Identifier: Apache-2.0
// The study of one difficulty mix: each variant at its best learning rate, the accuracy targets, and
// the per-seed quantities the tables, the JSON summary and the screen report (mean, min and max over
// seeds).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "run_all.hpp"
#include "runner.hpp"
#include "study_stats.hpp"

namespace toy {

// Targets are these fractions of the best final seed-mean of any variant (MixStudy::reference).
inline constexpr std::array<double, 3> target_fractions = {0.90, 0.95, 0.97};
// Accuracy is also read at these fixed budgets of training evaluations.
inline constexpr std::array<double, 3> fixed_budgets = {10000, 20000, 40000};

struct VariantSummary {
  std::size_t rate = 0;                 // index of the chosen learning rate
  std::vector<const RunResult*> seeds;  // at that rate, one per seed
  double selection_score = 0.0;         // mean Acc@final over the budget, averaged over seeds
};

struct MixStudy {
  bool hard = false;
  std::vector<VariantSummary> variants;
  std::array<double, 2> reference{};  // best seed-mean final Acc@1 / Acc@final of any variant
  double target(Metric metric, double fraction) const {
    return fraction * reference[metric == Metric::acc_turn1 ? 0 : 1];
  }
};

// Each variant at the learning rate with the highest mean Acc@final over the budget, averaged over seeds.
MixStudy summarise(const Options& options, std::size_t mix, const std::vector<RunKey>& keys,
                   const std::vector<RunResult>& results, std::size_t variant_count);

// One value per seed of the variant's chosen rate, reduced to mean / min / max.
inline Stats per_seed(const VariantSummary& summary, const auto& of) {
  std::vector<std::optional<double>> values;
  for (const RunResult* run : summary.seeds) values.push_back(of(*run));
  return stats_of(values);
}

Stats final_value(const VariantSummary& s, Metric metric);
Stats value_at_budget(const VariantSummary& s, Metric metric, double evaluations);
Stats evaluations_to(const VariantSummary& s, Metric metric, double target);
Stats hours_to(const VariantSummary& s, Metric metric, double target);
Stats final_speedup(const VariantSummary& s);
Stats repairs_pushed_down(const VariantSummary& s);
Stats mean_advantage_rms(const VariantSummary& s);
Stats evaluations_per_step(const VariantSummary& s);

// 0.95 -> "95": the key of a target in the tables and the JSON.
std::string percent_key(double fraction);

// 1,2,3,5 -> "1-3,5".
std::string seeds_text(const std::vector<std::uint64_t>& seeds);

std::string mix_name(bool hard);

}  // namespace toy
