// SPDX-License-Identifier: Apache-2.0
#include "claims.hpp"

#include <stdexcept>

namespace toy {

namespace {

static_assert(target_fractions[acc_final_target] == 0.95, "PairResult::hours_ratio is to the 95 % Acc@final target");

const PairResult* find_pair(const std::vector<PairResult>& pairs, const std::string& a, const std::string& b) {
  for (const PairResult& p : pairs) {
    if (p.pair.a == a && p.pair.b == b) return &p;
  }
  return nullptr;
}

int seeds_reaching(const MixStudy& study, std::size_t variant, Metric metric, double target) {
  return evaluations_to(study.variants[variant], metric, target).present;
}

ConvergenceClaim convergence(Metric metric, std::size_t target_index, const Options& options,
                             const std::vector<Variant>& variants, const std::vector<MixStudy>& studies,
                             const std::vector<std::vector<PairResult>>& pairs) {
  ConvergenceClaim claim;
  claim.metric = metric;
  claim.fraction = target_fractions[target_index];
  for (const MixStudy& study : studies) claim.target.push_back(study.target(metric, claim.fraction));
  const std::size_t leap = index_of(variants, "leap");
  const std::size_t m = metric == Metric::acc_turn1 ? 0 : 1;  // PairResult's metric index
  for (double gamma : options.reward_gammas) {
    const std::string baseline = "multi_turn_g" + gamma_text(gamma);
    const std::size_t b = index_of(variants, baseline);
    std::vector<Reach> row;
    for (std::size_t mix = 0; mix < studies.size(); ++mix) {
      const PairResult* pair = find_pair(pairs[mix], "leap", baseline);
      if (pair == nullptr || leap == variants.size() || b == variants.size()) {
        throw std::logic_error("the study has no pair leap vs " + baseline);
      }
      const double target = claim.target[mix];
      row.push_back({pair->evaluation_ratio[m][target_index], seeds_reaching(studies[mix], leap, metric, target),
                     seeds_reaching(studies[mix], b, metric, target)});
    }
    claim.baseline_gamma.push_back(gamma);
    claim.reach.push_back(row);
  }
  return claim;
}

}  // namespace

Claims gather_claims(const Options& options, const std::vector<Variant>& variants, const std::vector<MixStudy>& studies,
                     const std::vector<std::vector<PairResult>>& pairs) {
  Claims claims;
  for (const MixStudy& study : studies) claims.mixes.push_back(mix_name(study.hard));
  claims.seeds = static_cast<int>(options.seeds.size());
  claims.max_turns = options.max_turns;
  claims.acc_turn1 = convergence(Metric::acc_turn1, acc_turn1_target, options, variants, studies, pairs);
  claims.acc_final = convergence(Metric::acc_final, acc_final_target, options, variants, studies, pairs);

  const std::string ablation = gamma_text(options.ablation_gamma);
  const DcpSaving twins[] = {{"rank", "leap", "leap_unpruned", {}, {}, {}},
                             {"GRPO", "grpo_dcp_g" + ablation, "multi_turn_g" + ablation, {}, {}, {}}};
  for (DcpSaving saving : twins) {
    bool complete = true;
    for (std::size_t mix = 0; mix < studies.size(); ++mix) {
      const PairResult* pair = find_pair(pairs[mix], saving.pruned, saving.unpruned);
      if (pair == nullptr) {
        complete = false;  // the GRPO twin exists only when the ablation's discount is among the baselines
        break;
      }
      saving.per_step.push_back(pair->evaluations_ratio_total);
      saving.time_to_target.push_back(pair->hours_ratio);
      saving.final_difference.push_back(pair->final_difference[1]);
    }
    if (complete) claims.dcp.push_back(saving);
  }
  return claims;
}

}  // namespace toy
