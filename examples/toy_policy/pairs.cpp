// SPDX-License-Identifier: Apache-2.0
#include "pairs.hpp"

#include <algorithm>
#include <optional>

namespace toy {

namespace {

// Per-seed ratio a / b of two per-seed quantities (both present), or difference a - b.
Stats paired(const VariantSummary& a, const VariantSummary& b, const auto& of, bool ratio) {
  std::vector<std::optional<double>> values;
  for (std::size_t s = 0; s < a.seeds.size(); ++s) {
    const std::optional<double> x = of(*a.seeds[s]);
    const std::optional<double> y = of(*b.seeds[s]);
    if (x && y && (!ratio || *y > 0.0)) {
      values.push_back(ratio ? *x / *y : *x - *y);
    } else {
      values.push_back(std::nullopt);
    }
  }
  return stats_of(values);
}

}  // namespace

std::vector<Pair> make_pairs(const Options& options, const std::vector<Variant>& variants) {
  std::vector<Pair> pairs;
  const auto has = [&](const std::string& name) {
    return std::any_of(variants.begin(), variants.end(), [&](const Variant& v) { return v.name == name; });
  };
  for (double gamma : options.reward_gammas) {
    const std::string grpo = "multi_turn_g" + gamma_text(gamma);
    pairs.push_back({"leap", grpo, "LEAP as published vs multi-turn GRPO, reward γ = " + gamma_text(gamma)});
  }
  if (has("multi_turn_g1.0"))
    pairs.push_back({"rank_binary", "multi_turn_g1.0", "binary preference: rank (w = 0) vs GRPO"});
  const std::string ablation = "multi_turn_g" + gamma_text(options.ablation_gamma);
  const std::string grpo_dcp = "grpo_dcp_g" + gamma_text(options.ablation_gamma);
  pairs.push_back({"leap", "leap_unpruned", "DCP saving, rank: leap vs leap_unpruned"});
  if (has(ablation)) pairs.push_back({grpo_dcp, ablation, "DCP saving, GRPO: " + grpo_dcp + " vs " + ablation});
  if (has(ablation)) pairs.push_back({"leap_unpruned", ablation, "estimator, all expanded: rank vs GRPO"});
  pairs.push_back({"leap", grpo_dcp, "estimator, behind DCP: rank vs GRPO"});
  pairs.push_back({"leap_speed", "leap", "speed-aware order vs published"});
  return pairs;
}

std::size_t index_of(const std::vector<Variant>& variants, const std::string& name) {
  for (std::size_t v = 0; v < variants.size(); ++v) {
    if (variants[v].name == name) return v;
  }
  return variants.size();
}

std::vector<PairResult> compare_pairs(const std::vector<Pair>& pairs, const std::vector<Variant>& variants,
                                      const MixStudy& study) {
  std::vector<PairResult> out;
  for (const Pair& pair : pairs) {
    const std::size_t a = index_of(variants, pair.a);
    const std::size_t b = index_of(variants, pair.b);
    if (a == variants.size() || b == variants.size()) continue;
    const VariantSummary& va = study.variants[a];
    const VariantSummary& vb = study.variants[b];
    PairResult result;
    result.pair = pair;
    for (std::size_t m = 0; m < 2; ++m) {
      const Metric metric = m == 0 ? Metric::acc_turn1 : Metric::acc_final;
      for (std::size_t t = 0; t < target_fractions.size(); ++t) {
        const double target = study.target(metric, target_fractions[t]);
        result.evaluation_ratio[m][t] = paired(
            va, vb,
            [&](const RunResult& run) -> std::optional<double> {
              const auto crossing = first_reaching(run.curve, metric, target);
              return crossing ? std::optional<double>(crossing->evaluations) : std::nullopt;
            },
            true);
      }
      result.final_difference[m] = paired(
          va, vb, [&](const RunResult& run) -> std::optional<double> { return value_of(run.curve.back(), metric); },
          false);
    }
    const double target95 = study.target(Metric::acc_final, 0.95);
    result.hours_ratio = paired(
        va, vb,
        [&](const RunResult& run) -> std::optional<double> {
          const auto crossing = first_reaching(run.curve, Metric::acc_final, target95);
          return crossing ? std::optional<double>(crossing->modelled_seconds) : std::nullopt;
        },
        true);
    result.evaluations_ratio_total = paired(
        va, vb,
        [](const RunResult& run) -> std::optional<double> { return static_cast<double>(run.evaluations) / run.steps; },
        true);
    result.speedup_ratio = paired(
        va, vb, [](const RunResult& run) -> std::optional<double> { return run.curve.back().speedup; }, true);
    out.push_back(result);
  }
  return out;
}

}  // namespace toy
