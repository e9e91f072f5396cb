// SPDX-License-Identifier: Apache-2.0
#include "tables.hpp"

#include <cstdio>
#include <sstream>

namespace toy {

namespace {

std::string format_number(double value, const char* style) {
  char text[32];
  if (std::string(style) == "k") {
    std::snprintf(text, sizeof text, "%.1fk", value / 1000.0);
  } else {
    std::snprintf(text, sizeof text, style, value);
  }
  return text;
}

// "mean [min, max]"; with seeds missing "mean [min, max] n/N"; `none` when no seed has a value.
std::string cell(const Stats& stats, const char* style, const char* none = "-") {
  if (stats.present == 0) return none;
  std::string text = format_number(stats.mean, style);
  if (stats.total > 1) text += " [" + format_number(stats.min, style) + ", " + format_number(stats.max, style) + "]";
  if (stats.present < stats.total) text += " " + std::to_string(stats.present) + "/" + std::to_string(stats.total);
  return text;
}

}  // namespace

std::string tables(const Options& options, const std::vector<Variant>& variants, const MixStudy& study,
                   const std::vector<PairResult>& pairs) {
  std::ostringstream out;
  const int T = options.max_turns;
  out << "SIMULATED environment, " << mix_name(study.hard) << " mix; seeds " << seeds_text(options.seeds)
      << " (mean [min, max] over seeds); " << options.tasks << " tasks, G = " << options.group_size << ", up to " << T
      << " turns, " << options.budget << " training evaluations per run; turn credit γ = " << options.credit_gamma
      << "\n";
  char targets[256];
  std::snprintf(
      targets, sizeof targets,
      "targets: 90 / 95 / 97 %% of the best final seed-mean of any variant: Acc@1 %.3f -> %.3f / %.3f / %.3f, "
      "Acc@%d %.3f -> %.3f / %.3f / %.3f\n",
      study.reference[0], study.target(Metric::acc_turn1, 0.90), study.target(Metric::acc_turn1, 0.95),
      study.target(Metric::acc_turn1, 0.97), T, study.reference[1], study.target(Metric::acc_final, 0.90),
      study.target(Metric::acc_final, 0.95), study.target(Metric::acc_final, 0.97));
  out << targets << "\n";
  out << "| variant | lr | final Acc@1 | final Acc@" << T;
  for (double budget : fixed_budgets) out << " | Acc@1 / Acc@" << T << " at " << format_number(budget, "k");
  for (double f : target_fractions) out << " | evals to " << percent_key(f) << " % Acc@1";
  for (double f : target_fractions) out << " | evals to " << percent_key(f) << " % Acc@" << T;
  out << " | modelled h to 95 % Acc@" << T << " | speedup | evals / step | repairs with A < 0 | advantage RMS |\n|---";
  for (int c = 0; c < 17; ++c) out << "|---";
  out << "|\n";
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const VariantSummary& s = study.variants[v];
    out << "| " << variants[v].name << " | " << options.learning_rates[s.rate] << " | "
        << cell(final_value(s, Metric::acc_turn1), "%.3f") << " | " << cell(final_value(s, Metric::acc_final), "%.3f");
    for (double budget : fixed_budgets) {
      out << " | " << cell(value_at_budget(s, Metric::acc_turn1, budget), "%.3f") << " / "
          << cell(value_at_budget(s, Metric::acc_final, budget), "%.3f");
    }
    for (Metric metric : {Metric::acc_turn1, Metric::acc_final}) {
      for (double f : target_fractions)
        out << " | " << cell(evaluations_to(s, metric, study.target(metric, f)), "k", "not reached");
    }
    out << " | " << cell(hours_to(s, Metric::acc_final, study.target(Metric::acc_final, 0.95)), "%.2f", "not reached")
        << " | " << cell(final_speedup(s), "%.2fx") << " | " << cell(evaluations_per_step(s), "%.0f") << " | "
        << cell(repairs_pushed_down(s), "%.2f") << " | " << cell(mean_advantage_rms(s), "%.2f") << " |\n";
  }
  out << "\nPairs (per seed: a / b for evaluations, time and speedup; a - b for final accuracy):\n\n";
  out << "| a vs b | what";
  for (double f : target_fractions) out << " | evals to " << percent_key(f) << " % Acc@1";
  for (double f : target_fractions) out << " | evals to " << percent_key(f) << " % Acc@" << T;
  out << " | modelled time to 95 % Acc@" << T << " | evals / step | final Acc@1 | final Acc@" << T
      << " | speedup |\n|---|---";
  for (int c = 0; c < 11; ++c) out << "|---";
  out << "|\n";
  for (const PairResult& p : pairs) {
    out << "| " << p.pair.a << " vs " << p.pair.b << " | " << p.pair.what;
    for (std::size_t m = 0; m < 2; ++m) {
      for (std::size_t t = 0; t < target_fractions.size(); ++t) out << " | " << cell(p.evaluation_ratio[m][t], "%.2fx");
    }
    out << " | " << cell(p.hours_ratio, "%.2fx") << " | " << cell(p.evaluations_ratio_total, "%.2fx") << " | "
        << cell(p.final_difference[0], "%+.3f") << " | " << cell(p.final_difference[1], "%+.3f") << " | "
        << cell(p.speedup_ratio, "%.2fx") << " |\n";
  }
  char model[320];
  std::snprintf(
      model, sizeof model,
      "\nModelled wall clock: each evaluation costs %.0f ms of compile time (bench_compile: one compile at a time, "
      "each "
      "in "
      "its own child) plus %.0f ms of GPU time when the candidate compiles (an assumption: correctness trials and "
      "timed runs); one evaluation at a time, no generation time.\n",
      options.compile_ms, options.gpu_ms);
  out << model;
  return out.str();
}

}  // namespace toy
