// SPDX-License-Identifier: Apache-2.0
#include "summary_json.hpp"

#include <string>

namespace toy {

namespace {

nlohmann::json to_json(const Stats& stats) {
  if (stats.present == 0) return nullptr;
  return nlohmann::json{{"mean", stats.mean}, {"min", stats.min}, {"max", stats.max}, {"seeds", stats.present}};
}

}  // namespace

nlohmann::json study_json(const Options& options, const std::vector<Variant>& variants, const MixStudy& study,
                          const std::vector<PairResult>& pairs) {
  nlohmann::json j;
  j["environment"] = "simulated";
  j["mix"] = mix_name(study.hard);
  j["seeds"] = options.seeds;
  j["tasks"] = options.tasks;
  j["group_size"] = options.group_size;
  j["max_turns"] = options.max_turns;
  j["budget_evaluations"] = options.budget;
  j["learning_rates"] = options.learning_rates;
  j["credit_gamma"] = options.credit_gamma;
  j["wall_clock_model"] = {{"compile_ms", options.compile_ms}, {"gpu_ms_per_compiled_candidate", options.gpu_ms}};
  j["reference"] = {{"acc_turn1", study.reference[0]}, {"acc_final", study.reference[1]}};
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const Variant& variant = variants[v];
    const VariantSummary& s = study.variants[v];
    nlohmann::json m;
    m["description"] = variant.description;
    m["estimator"] = variant.estimator == Estimator::rank ? "rank" : "grpo";
    m["gate"] = variant.gate == GateKind::dcp ? "dcp" : (variant.gate == GateKind::all ? "all" : "single_turn");
    if (variant.estimator == Estimator::rank) {
      m["order"] = variant.order_name;
      m["kernel_order"] = variant.order;
    } else {
      m["reward_gamma"] = variant.reward_gamma;
    }
    m["learning_rate"] = options.learning_rates[s.rate];
    m["selection_mean_acc_final_over_budget"] = s.selection_score;
    // Seed means, flat, for quick reading; the nested objects carry min and max.
    m["acc_turn1"] = final_value(s, Metric::acc_turn1).mean;
    m["acc_final"] = final_value(s, Metric::acc_final).mean;
    m["evaluations"] = per_seed(s, [](const RunResult& run) -> std::optional<double> { return run.evaluations; }).mean;
    m["steps"] = per_seed(s, [](const RunResult& run) -> std::optional<double> { return run.steps; }).mean;
    m["speedup"] = final_speedup(s).mean;
    m["final"] = {{"acc_turn1", to_json(final_value(s, Metric::acc_turn1))},
                  {"acc_final", to_json(final_value(s, Metric::acc_final))},
                  {"speedup", to_json(final_speedup(s))}};
    for (double budget : fixed_budgets) {
      m["at_evaluations"][std::to_string(static_cast<long long>(budget))] = {
          {"acc_turn1", to_json(value_at_budget(s, Metric::acc_turn1, budget))},
          {"acc_final", to_json(value_at_budget(s, Metric::acc_final, budget))}};
    }
    for (double f : target_fractions) {
      m["evaluations_to_target"]["acc_turn1"][percent_key(f)] =
          to_json(evaluations_to(s, Metric::acc_turn1, study.target(Metric::acc_turn1, f)));
      m["evaluations_to_target"]["acc_final"][percent_key(f)] =
          to_json(evaluations_to(s, Metric::acc_final, study.target(Metric::acc_final, f)));
    }
    m["modelled_hours_to_95_acc_final"] =
        to_json(hours_to(s, Metric::acc_final, study.target(Metric::acc_final, 0.95)));
    m["evaluations_per_step"] = to_json(evaluations_per_step(s));
    m["solved_later_negative_share"] = to_json(repairs_pushed_down(s));
    m["advantage_rms"] = to_json(mean_advantage_rms(s));
    nlohmann::json reasons = nlohmann::json::object();
    std::array<int, leap::gate_reason_count> total{};
    int groups = 0;
    for (const RunResult* run : s.seeds) {
      for (std::size_t r = 0; r < total.size(); ++r) total[r] += run->groups_by_reason[r];
      groups += run->groups;
    }
    for (std::size_t r = 0; r < total.size(); ++r) {
      if (total[r] > 0) reasons[std::string(leap::to_string(static_cast<leap::GateReason>(r)))] = total[r];
    }
    m["groups"] = groups;
    m["groups_by_reason"] = reasons;
    j["methods"][variant.name] = m;
  }
  for (const PairResult& p : pairs) {
    nlohmann::json entry{{"a", p.pair.a}, {"b", p.pair.b}, {"what", p.pair.what}};
    for (std::size_t t = 0; t < target_fractions.size(); ++t) {
      entry["evaluation_ratio"]["acc_turn1"][percent_key(target_fractions[t])] = to_json(p.evaluation_ratio[0][t]);
      entry["evaluation_ratio"]["acc_final"][percent_key(target_fractions[t])] = to_json(p.evaluation_ratio[1][t]);
    }
    entry["modelled_time_ratio_95_acc_final"] = to_json(p.hours_ratio);
    entry["evaluations_per_step_ratio"] = to_json(p.evaluations_ratio_total);
    entry["final_difference"] = {{"acc_turn1", to_json(p.final_difference[0])},
                                 {"acc_final", to_json(p.final_difference[1])}};
    entry["speedup_ratio"] = to_json(p.speedup_ratio);
    j["pairs"].push_back(entry);
  }
  return j;
}

}  // namespace toy
