// SPDX-License-Identifier: Apache-2.0
#include "study.hpp"

#include <algorithm>
#include <cmath>

namespace toy {

MixStudy summarise(const Options& options, std::size_t mix, const std::vector<RunKey>& keys,
                   const std::vector<RunResult>& results, std::size_t variant_count) {
  MixStudy study;
  study.hard = options.mixes[mix];
  const std::size_t rates = options.learning_rates.size();
  const std::size_t seeds = options.seeds.size();
  // table[variant][rate][seed]
  std::vector<std::vector<std::vector<const RunResult*>>> table(
      variant_count, std::vector<std::vector<const RunResult*>>(rates, std::vector<const RunResult*>(seeds)));
  for (std::size_t job = 0; job < keys.size(); ++job) {
    if (keys[job].mix == mix) table[keys[job].variant][keys[job].rate][keys[job].seed] = &results[job];
  }
  for (std::size_t v = 0; v < variant_count; ++v) {
    VariantSummary best;
    for (std::size_t r = 0; r < rates; ++r) {
      double score = 0.0;
      for (const RunResult* run : table[v][r]) {
        score += mean_over_budget(run->curve, Metric::acc_final, static_cast<double>(options.budget));
      }
      score /= static_cast<double>(seeds);
      if (r == 0 || score > best.selection_score) best = {r, table[v][r], score};
    }
    study.variants.push_back(best);
  }
  for (const VariantSummary& summary : study.variants) {
    for (Metric metric : {Metric::acc_turn1, Metric::acc_final}) {
      double sum = 0.0;
      for (const RunResult* run : summary.seeds) sum += value_of(run->curve.back(), metric);
      double& reference = study.reference[metric == Metric::acc_turn1 ? 0 : 1];
      reference = std::max(reference, sum / static_cast<double>(summary.seeds.size()));
    }
  }
  return study;
}

Stats final_value(const VariantSummary& s, Metric metric) {
  return per_seed(s, [&](const RunResult& run) -> std::optional<double> { return value_of(run.curve.back(), metric); });
}
Stats value_at_budget(const VariantSummary& s, Metric metric, double evaluations) {
  return per_seed(s, [&](const RunResult& run) { return value_at(run.curve, metric, evaluations); });
}
Stats evaluations_to(const VariantSummary& s, Metric metric, double target) {
  return per_seed(s, [&](const RunResult& run) -> std::optional<double> {
    const auto crossing = first_reaching(run.curve, metric, target);
    return crossing ? std::optional<double>(crossing->evaluations) : std::nullopt;
  });
}
Stats hours_to(const VariantSummary& s, Metric metric, double target) {
  return per_seed(s, [&](const RunResult& run) -> std::optional<double> {
    const auto crossing = first_reaching(run.curve, metric, target);
    return crossing ? std::optional<double>(crossing->modelled_seconds / 3600.0) : std::nullopt;
  });
}
Stats final_speedup(const VariantSummary& s) {
  return per_seed(s, [](const RunResult& run) -> std::optional<double> { return run.curve.back().speedup; });
}
Stats repairs_pushed_down(const VariantSummary& s) {
  return per_seed(s, [](const RunResult& run) -> std::optional<double> {
    if (run.solved_later == 0) return std::nullopt;
    return static_cast<double>(run.solved_later_negative) / static_cast<double>(run.solved_later);
  });
}
Stats mean_advantage_rms(const VariantSummary& s) {
  return per_seed(s, [](const RunResult& run) -> std::optional<double> { return run.advantage_rms_sum / run.steps; });
}
Stats evaluations_per_step(const VariantSummary& s) {
  return per_seed(s, [](const RunResult& run) -> std::optional<double> {
    return static_cast<double>(run.evaluations) / run.steps;
  });
}

std::string percent_key(double fraction) { return std::to_string(static_cast<int>(std::lround(fraction * 100))); }

std::string seeds_text(const std::vector<std::uint64_t>& seeds) {
  std::string text;
  for (std::size_t i = 0; i < seeds.size();) {
    std::size_t j = i;
    while (j + 1 < seeds.size() && seeds[j + 1] == seeds[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(seeds[i]);
    if (j > i) text += "-" + std::to_string(seeds[j]);
    i = j + 1;
  }
  return text;
}

std::string mix_name(bool hard) { return hard ? "hard" : "default"; }

}  // namespace toy
