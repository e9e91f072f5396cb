// SPDX-License-Identifier: Apache-2.0
// toy_policy: a small softmax policy learns to "write kernels" in a SIMULATED environment, trained by
// LEAP and by GRPO baselines on the same tasks, seeds and evaluation budget, and compared in pairs
// whose rewards prefer the same things:
//   single_turn        GRPO, binary reward, one turn (the reference without debugging turns)
//   multi_turn_g<γ>    GRPO on the reward γ^(k-1) for a success at turn k (0 unsolved), every group
//                      expanded; γ = 1 is the binary reward, smaller γ prefer early success more
//   rank_binary        rank advantage with turn_weight 0 (successes tie), every group expanded: the
//                      same preference as multi_turn_g1.0
//   leap_unpruned      rank advantage, LEAP's published order, every group expanded
//   leap               LEAP as published: DCP gate, published order, turn credit
//   grpo_dcp_g0.9      GRPO (γ = 0.9) behind LEAP's DCP gate: with multi_turn_g0.9, leap_unpruned and
//                      leap, the 2x2 ablation of estimator and pruning
//   leap_speed         LEAP with the speed-aware order (with_speedup(0.05)), its own labelled variant
// Every variant trains at every learning rate of the grid, for every seed (runs in parallel threads,
// each run alone on its thread, so results do not depend on the thread count), and is reported at
// its best rate. Outputs: one summary table, one table of paired comparisons, a data file and a plot
// (gnuplot) of Acc@1 and Acc@3 against training evaluations with the seeds' range shaded.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <leap/leap.hpp>
#include <leap/rollout.hpp>
#include <nlohmann/json.hpp>

#include "simulated_kernel_env.hpp"
#include "softmax_policy.hpp"
#include "study_stats.hpp"

namespace {

using toy::Metric;
using toy::Point;
using toy::Stats;

constexpr std::array<double, 3> target_fractions = {0.90, 0.95, 0.97};
constexpr std::array<double, 3> fixed_budgets = {10000, 20000, 40000};

struct Options {
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  std::int64_t budget = 48000;  // training evaluations per run
  int tasks = 40;
  int group_size = 8;
  int max_turns = 3;
  std::int64_t eval_interval = 2000;  // held-out evaluation every this many training evaluations
  int eval_samples = 16;
  int threads = 0;  // 0: one per hardware thread
  std::vector<double> learning_rates = {1.0, 3.0, 10.0};
  double credit_gamma = 0.9;                            // turn credit (RolloutOptions::gamma), every variant
  std::vector<double> reward_gammas = {0.5, 0.9, 1.0};  // the multi-turn GRPO baselines' reward discount
  double ablation_gamma = 0.9;                          // reward γ of the GRPO arms of the 2x2 ablation
  double speed_tolerance = 0.05;                        // leap_speed's band
  std::vector<bool> mixes = {false};                    // hard_recoverable per mix
  double compile_ms = 48.0;  // bench_compile: one worker, each compile in its own child, 20.9 per second
  double gpu_ms = 100.0;     // assumed GPU time (trials + timed runs) of a candidate that compiles
  bool json = false;
  std::string out_dir = "toy_policy_out";
};

void print_help() {
  std::printf(
      "toy_policy - LEAP against GRPO baselines on a SIMULATED kernel-writing environment\n\n"
      "Options:\n"
      "  --seeds LIST      seeds, e.g. 1-5 or 1,4,9 (default 1-3); runs go in parallel threads\n"
      "  --budget N        training evaluations per run (default 48000)\n"
      "  --lr LIST         learning rates, each variant reported at its best (default 1,3,10)\n"
      "  --study           the full study: --seeds 1-5 --lr 0.3,1,3,10,30 --budget 60000, default and\n"
      "                    hard mixes\n"
      "  --hard            the hard mix: recoverable tasks rarely succeed on turn 1\n"
      "  --tasks N         tasks in the simulated set (default 40)\n"
      "  --group-size N    samples per task and step, G (default 8)\n"
      "  --max-turns N     turns of an expanded trajectory (default 3)\n"
      "  --eval-interval N held-out evaluation every N training evaluations (default 2000)\n"
      "  --eval-samples N  held-out samples per task (default 16)\n"
      "  --credit-gamma X  turn-credit discount for every variant (default 0.9)\n"
      "  --reward-gammas L the multi-turn GRPO baselines' reward discounts (default 0.5,0.9,1)\n"
      "  --compile-ms X    modelled compile time per evaluation (default 48, from bench_compile)\n"
      "  --gpu-ms X        modelled GPU time per candidate that compiles (default 100, an assumption)\n"
      "  --threads N       worker threads (default: hardware threads); results do not depend on it\n"
      "  --out DIR         summary.md, summary.json, data files and plots (default toy_policy_out)\n"
      "  --json            print one JSON summary on stdout instead of the tables\n");
}

std::vector<double> parse_numbers(const std::string& option, const std::string& list) {
  std::vector<double> values;
  for (std::size_t begin = 0; begin <= list.size();) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    const std::string item = list.substr(begin, comma - begin);
    std::size_t used = 0;
    double value = 0.0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw std::invalid_argument(option + ": '" + item + "' is not a number");
    values.push_back(value);
    begin = comma + 1;
  }
  return values;
}

std::vector<std::uint64_t> parse_seeds(const std::string& list) {
  std::vector<std::uint64_t> seeds;
  for (std::size_t begin = 0; begin <= list.size();) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    const std::string item = list.substr(begin, comma - begin);
    const std::size_t dash = item.find('-');
    try {
      if (dash == std::string::npos) {
        seeds.push_back(std::stoull(item));
      } else {
        const std::uint64_t first = std::stoull(item.substr(0, dash));
        const std::uint64_t last = std::stoull(item.substr(dash + 1));
        if (last < first || last - first > 1000) throw std::invalid_argument("range");
        for (std::uint64_t s = first; s <= last; ++s) seeds.push_back(s);
      }
    } catch (const std::exception&) {
      throw std::invalid_argument("--seeds: '" + item + "' is neither a seed nor a range like 1-5");
    }
    begin = comma + 1;
  }
  std::sort(seeds.begin(), seeds.end());
  if (std::adjacent_find(seeds.begin(), seeds.end()) != seeds.end()) throw std::invalid_argument("--seeds: a seed is listed twice");
  return seeds;
}

double parse_number(const std::string& option, const std::string& text) {
  const std::vector<double> values = parse_numbers(option, text);
  if (values.size() != 1) throw std::invalid_argument(option + " takes one number, got '" + text + "'");
  return values.front();
}

std::optional<Options> parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    auto positive = [&](const std::string& text) {
      std::size_t used = 0;
      long long n = 0;
      try {
        n = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || n < 1) throw std::invalid_argument(arg + " must be an integer >= 1, got '" + text + "'");
      return n;
    };
    auto unit_interval = [&](double x) {
      if (!(x >= 0.0 && x <= 1.0)) throw std::invalid_argument(arg + " must lie in [0, 1]");
      return x;
    };
    if (arg == "--help" || arg == "-h") {
      print_help();
      return std::nullopt;
    } else if (arg == "--seeds" || arg == "--seed") {
      options.seeds = parse_seeds(value());
    } else if (arg == "--budget") {
      options.budget = positive(value());
    } else if (arg == "--tasks") {
      options.tasks = static_cast<int>(positive(value()));
    } else if (arg == "--group-size") {
      options.group_size = static_cast<int>(positive(value()));
    } else if (arg == "--max-turns") {
      options.max_turns = static_cast<int>(positive(value()));
    } else if (arg == "--eval-interval") {
      options.eval_interval = positive(value());
    } else if (arg == "--eval-samples") {
      options.eval_samples = static_cast<int>(positive(value()));
    } else if (arg == "--threads") {
      options.threads = static_cast<int>(positive(value()));
    } else if (arg == "--lr") {
      options.learning_rates = parse_numbers(arg, value());
      for (double rate : options.learning_rates) {
        if (!(rate > 0.0)) throw std::invalid_argument("--lr: learning rates must be > 0");
      }
    } else if (arg == "--credit-gamma") {
      options.credit_gamma = unit_interval(parse_number(arg, value()));
    } else if (arg == "--reward-gammas") {
      options.reward_gammas = parse_numbers(arg, value());
      for (double g : options.reward_gammas) unit_interval(g);
      std::vector<double> sorted = options.reward_gammas;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        throw std::invalid_argument("--reward-gammas: a discount is listed twice");
      }
    } else if (arg == "--compile-ms") {
      options.compile_ms = parse_number(arg, value());
    } else if (arg == "--gpu-ms") {
      options.gpu_ms = parse_number(arg, value());
    } else if (arg == "--study") {
      options.seeds = {1, 2, 3, 4, 5};
      options.learning_rates = {0.3, 1.0, 3.0, 10.0, 30.0};
      options.budget = 60000;
      options.mixes = {false, true};
    } else if (arg == "--hard") {
      options.mixes = {true};
    } else if (arg == "--out") {
      options.out_dir = value();
    } else if (arg == "--json") {
      options.json = true;
    } else {
      throw std::invalid_argument("unknown option " + arg + " (see --help)");
    }
  }
  if (!(options.compile_ms >= 0.0) || !(options.gpu_ms >= 0.0)) throw std::invalid_argument("--compile-ms and --gpu-ms must be >= 0");
  return options;
}

// ---------------------------------------------------------------------------------------------
// The variants.

enum class Estimator { grpo, rank };
enum class GateKind { single_turn, all, dcp };

struct Variant {
  std::string name;
  std::string description;
  Estimator estimator = Estimator::rank;
  GateKind gate = GateKind::all;
  double reward_gamma = 1.0;  // GRPO: reward γ^(k-1) for a success at turn k
  leap::KernelOrder order{};  // rank
  std::string order_name;     // rank: "published", ...
};

// 0.5 -> "0.5", 1 -> "1.0", 0.95 -> "0.95": one decimal unless that would round.
std::string gamma_text(double gamma) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", gamma);
  if (std::stod(text) != gamma) std::snprintf(text, sizeof text, "%g", gamma);
  return text;
}

std::vector<Variant> make_variants(const Options& options) {
  std::vector<Variant> variants;
  variants.push_back({"single_turn", "GRPO, binary reward, one turn", Estimator::grpo, GateKind::single_turn, 1.0, {}, ""});
  for (double gamma : options.reward_gammas) {
    variants.push_back({"multi_turn_g" + gamma_text(gamma), "GRPO, reward " + gamma_text(gamma) + "^(k-1), all groups expanded",
                        Estimator::grpo, GateKind::all, gamma, {}, ""});
  }
  leap::KernelOrder binary;
  binary.turn_weight = 0.0;
  variants.push_back({"rank_binary", "rank, successes tie (turn_weight 0), all groups expanded", Estimator::rank,
                      GateKind::all, 1.0, binary, "turn_weight 0"});
  variants.push_back({"leap_unpruned", "rank, published order, all groups expanded", Estimator::rank, GateKind::all, 1.0,
                      leap::KernelOrder{}, "published"});
  variants.push_back({"grpo_dcp_g" + gamma_text(options.ablation_gamma),
                      "GRPO, reward " + gamma_text(options.ablation_gamma) + "^(k-1), DCP gate", Estimator::grpo,
                      GateKind::dcp, options.ablation_gamma, {}, ""});
  variants.push_back({"leap", "LEAP as published: rank, published order, DCP gate", Estimator::rank, GateKind::dcp, 1.0,
                      leap::KernelOrder{}, "published"});
  char speed_name[64];
  std::snprintf(speed_name, sizeof speed_name, "published + speedup within %g %%", 100 * options.speed_tolerance);
  variants.push_back({"leap_speed", std::string("speed-aware LEAP: ") + speed_name + ", DCP gate", Estimator::rank,
                      GateKind::dcp, 1.0, leap::KernelOrder::with_speedup(options.speed_tolerance), speed_name});
  return variants;
}

// The multi-turn baselines' reward: γ^(k-1) for a success at turn k, 0 unsolved.
struct DiscountedSolvedReward {
  double gamma = 0.9;
  double operator()(const leap::Outcome& outcome) const noexcept {
    return outcome.solved() ? std::pow(gamma, outcome.solved_turn - 1) : 0.0;
  }
};

// ---------------------------------------------------------------------------------------------
// One run: a variant at one learning rate on one seed's tasks.

struct RunKey {
  std::size_t mix = 0;
  std::size_t variant = 0;
  std::size_t rate = 0;
  std::size_t seed = 0;
};

struct RunResult {
  std::vector<Point> curve;
  int steps = 0;
  std::int64_t evaluations = 0;
  std::int64_t solved_later = 0;
  std::int64_t solved_later_negative = 0;
  double advantage_rms_sum = 0.0;  // over steps
  int groups = 0;
  std::array<int, leap::gate_reason_count> groups_by_reason{};
};

class Runner {
 public:
  Runner(const Options& options, const std::vector<toy::Task>& tasks, std::uint64_t seed)
      : options_(options), tasks_(tasks), seed_(seed) {}

  RunResult run(const Variant& variant, double learning_rate) const {
    const int turns = variant.gate == GateKind::single_turn ? 1 : options_.max_turns;
    const auto with_gate = [&](const auto& advantage) {
      switch (variant.gate) {
        case GateKind::single_turn: return train(leap::NeverExpand{}, advantage, turns, learning_rate);
        case GateKind::all: return train(leap::AlwaysExpand{}, advantage, turns, learning_rate);
        case GateKind::dcp: return train(leap::FailBandGate::leap_default(options_.group_size), advantage, turns, learning_rate);
      }
      return RunResult{};
    };
    if (variant.estimator == Estimator::rank) return with_gate(leap::RankAdvantage<>{variant.order});
    return with_gate(leap::GrpoAdvantage<DiscountedSolvedReward>{{variant.reward_gamma}, {}});
  }

 private:
  // Held-out accuracy of the policy on every task: the same random draws at every call.
  Point evaluate(const toy::SoftmaxPolicy& policy) const {
    leap::RolloutOptions eval;
    eval.group_size = options_.eval_samples;
    eval.max_turns = options_.max_turns;
    eval.seed = seed_ ^ 0xe7a1ull;
    const auto result =
        leap::run_step(tasks_, policy, environment_, leap::AlwaysExpand{}, leap::RankAdvantage<>{}, leap::InlineExecutor{}, eval);
    double log_sum = 0.0;
    int solved = 0;
    for (const leap::Outcome& outcome : result.outcomes) {
      if (outcome.solved() && outcome.speedup > 0.0) {
        log_sum += std::log(outcome.speedup);
        ++solved;
      }
    }
    Point point;
    point.acc_turn1 = result.metrics.accuracy_at(1);
    point.acc_final = result.metrics.accuracy_at(options_.max_turns);
    point.speedup = solved > 0 ? std::exp(log_sum / solved) : 0.0;
    return point;
  }

  template <class Gate, class Advantage>
  RunResult train(Gate gate, const Advantage& advantage, int max_turns, double learning_rate) const {
    RunResult run;
    toy::SoftmaxPolicy policy(static_cast<int>(tasks_.size()));
    run.curve.push_back(evaluate(policy));
    double modelled_seconds = 0.0;
    std::int64_t next_eval = options_.eval_interval;
    for (int step = 1; run.evaluations < options_.budget; ++step) {
      leap::RolloutOptions rollout;
      rollout.group_size = options_.group_size;
      rollout.max_turns = max_turns;
      rollout.gamma = options_.credit_gamma;
      rollout.seed = seed_;
      rollout.step = static_cast<std::uint64_t>(step);
      const auto result = leap::run_step(tasks_, policy, environment_, gate, advantage, leap::InlineExecutor{}, rollout);
      policy.update(result, learning_rate, options_.group_size);
      const leap::StepMetrics& m = result.metrics;
      run.steps = step;
      run.evaluations += m.evaluations;
      run.solved_later += m.solved_later;
      run.solved_later_negative += m.solved_later_negative;
      run.advantage_rms_sum += m.advantage_rms;
      run.groups += m.tasks;
      for (std::size_t r = 0; r < leap::gate_reason_count; ++r) run.groups_by_reason[r] += m.groups_by_reason[r];
      for (const auto& trajectory : result.trajectories) {
        for (const auto& turn : trajectory.turns) {
          modelled_seconds += (options_.compile_ms + (turn.verdict != leap::Verdict::compile_error ? options_.gpu_ms : 0.0)) / 1000.0;
        }
      }
      if (run.evaluations >= next_eval || run.evaluations >= options_.budget) {
        while (next_eval <= run.evaluations) next_eval += options_.eval_interval;
        Point point = evaluate(policy);
        point.step = step;
        point.evaluations = run.evaluations;
        point.modelled_seconds = modelled_seconds;
        run.curve.push_back(point);
      }
    }
    return run;
  }

  const Options& options_;
  const std::vector<toy::Task>& tasks_;
  std::uint64_t seed_;
  toy::SimulatedKernelEnvironment environment_;
};

// Runs every job on `threads` threads; each job runs alone on one thread, so the results are the same
// for any thread count. The progress goes to stderr: a live line on a terminal, otherwise one line
// every few seconds at most.
std::vector<RunResult> run_all(const Options& options, const std::vector<RunKey>& keys,
                               const std::vector<std::vector<std::vector<toy::Task>>>& tasks,
                               const std::vector<Variant>& variants, unsigned threads) {
  std::vector<RunResult> results(keys.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  const auto work = [&] {
    for (std::size_t job = next++; job < keys.size(); job = next++) {
      const RunKey& key = keys[job];
      const Runner runner(options, tasks[key.mix][key.seed], options.seeds[key.seed]);
      results[job] = runner.run(variants[key.variant], options.learning_rates[key.rate]);
      ++done;
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);

  const bool terminal = ::isatty(2) != 0;
  const auto started = std::chrono::steady_clock::now();
  auto last_line = started;
  std::size_t last_done = 0;
  while (done.load() < keys.size()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - started).count();
    const std::size_t finished = done.load();
    if (terminal) {
      std::fprintf(stderr, "\rtoy_policy: %zu/%zu runs done, %.0f s   ", finished, keys.size(), elapsed);
    } else if (finished != last_done && now - last_line >= std::chrono::seconds(5)) {
      std::fprintf(stderr, "toy_policy: %zu/%zu runs done, %.0f s\n", finished, keys.size(), elapsed);
      last_line = now;
      last_done = finished;
    }
  }
  for (std::thread& worker : workers) worker.join();
  if (terminal) std::fprintf(stderr, "\n");
  return results;
}

// ---------------------------------------------------------------------------------------------
// The study of one mix: each variant at its best rate, targets, paired comparisons.

struct VariantSummary {
  std::size_t rate = 0;                 // index of the chosen learning rate
  std::vector<const RunResult*> seeds;  // at that rate, one per seed
  double selection_score = 0.0;         // mean Acc@final over the budget, averaged over seeds
};

struct MixStudy {
  bool hard = false;
  std::vector<VariantSummary> variants;
  std::array<double, 2> reference{};  // best seed-mean final Acc@1 / Acc@final of any variant
  double target(Metric metric, double fraction) const { return fraction * reference[metric == Metric::acc_turn1 ? 0 : 1]; }
};

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
        score += toy::mean_over_budget(run->curve, Metric::acc_final, static_cast<double>(options.budget));
      }
      score /= static_cast<double>(seeds);
      if (r == 0 || score > best.selection_score) best = {r, table[v][r], score};
    }
    study.variants.push_back(best);
  }
  for (const VariantSummary& summary : study.variants) {
    for (Metric metric : {Metric::acc_turn1, Metric::acc_final}) {
      double sum = 0.0;
      for (const RunResult* run : summary.seeds) sum += toy::value_of(run->curve.back(), metric);
      double& reference = study.reference[metric == Metric::acc_turn1 ? 0 : 1];
      reference = std::max(reference, sum / static_cast<double>(summary.seeds.size()));
    }
  }
  return study;
}

Stats per_seed(const VariantSummary& summary, const auto& of) {
  std::vector<std::optional<double>> values;
  for (const RunResult* run : summary.seeds) values.push_back(of(*run));
  return toy::stats_of(values);
}

Stats final_value(const VariantSummary& s, Metric metric) {
  return per_seed(s, [&](const RunResult& run) -> std::optional<double> { return toy::value_of(run.curve.back(), metric); });
}
Stats value_at_budget(const VariantSummary& s, Metric metric, double evaluations) {
  return per_seed(s, [&](const RunResult& run) { return toy::value_at(run.curve, metric, evaluations); });
}
Stats evaluations_to(const VariantSummary& s, Metric metric, double target) {
  return per_seed(s, [&](const RunResult& run) -> std::optional<double> {
    const auto crossing = toy::first_reaching(run.curve, metric, target);
    return crossing ? std::optional<double>(crossing->evaluations) : std::nullopt;
  });
}
Stats hours_to(const VariantSummary& s, Metric metric, double target) {
  return per_seed(s, [&](const RunResult& run) -> std::optional<double> {
    const auto crossing = toy::first_reaching(run.curve, metric, target);
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
  return toy::stats_of(values);
}

// ---------------------------------------------------------------------------------------------
// Output.

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

nlohmann::json to_json(const Stats& stats) {
  if (stats.present == 0) return nullptr;
  return nlohmann::json{{"mean", stats.mean}, {"min", stats.min}, {"max", stats.max}, {"seeds", stats.present}};
}

std::string percent_key(double fraction) { return std::to_string(static_cast<int>(std::lround(fraction * 100))); }

struct Pair {
  std::string a, b, what;
};

std::vector<Pair> make_pairs(const Options& options, const std::vector<Variant>& variants) {
  std::vector<Pair> pairs;
  const auto has = [&](const std::string& name) {
    return std::any_of(variants.begin(), variants.end(), [&](const Variant& v) { return v.name == name; });
  };
  for (double gamma : options.reward_gammas) {
    const std::string grpo = "multi_turn_g" + gamma_text(gamma);
    pairs.push_back({"leap", grpo, "LEAP as published vs multi-turn GRPO, reward γ = " + gamma_text(gamma)});
  }
  if (has("multi_turn_g1.0")) pairs.push_back({"rank_binary", "multi_turn_g1.0", "binary preference: rank (w = 0) vs GRPO"});
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

struct PairResult {
  Pair pair;
  std::array<std::array<Stats, 3>, 2> evaluation_ratio;  // [metric][target]
  Stats hours_ratio;                                      // to the 95 % Acc@final target
  Stats evaluations_ratio_total;                          // evaluations per step
  std::array<Stats, 2> final_difference;                  // [metric]
  Stats speedup_ratio;
};

std::vector<PairResult> compare_pairs(const std::vector<Pair>& pairs, const std::vector<Variant>& variants, const MixStudy& study) {
  std::vector<PairResult> out;
  for (const Pair& pair : pairs) {
    const std::size_t a = index_of(variants, pair.a);
    const std::size_t b = index_of(variants, pair.b);
    if (a == variants.size() || b == variants.size()) continue;
    const VariantSummary& va = study.variants[a];
    const VariantSummary& vb = study.variants[b];
    PairResult result;
    result.pair = pair;
    for (int m = 0; m < 2; ++m) {
      const Metric metric = m == 0 ? Metric::acc_turn1 : Metric::acc_final;
      for (std::size_t t = 0; t < target_fractions.size(); ++t) {
        const double target = study.target(metric, target_fractions[t]);
        result.evaluation_ratio[m][t] = paired(va, vb, [&](const RunResult& run) -> std::optional<double> {
          const auto crossing = toy::first_reaching(run.curve, metric, target);
          return crossing ? std::optional<double>(crossing->evaluations) : std::nullopt;
        }, true);
      }
      result.final_difference[m] =
          paired(va, vb, [&](const RunResult& run) -> std::optional<double> { return toy::value_of(run.curve.back(), metric); }, false);
    }
    const double target95 = study.target(Metric::acc_final, 0.95);
    result.hours_ratio = paired(va, vb, [&](const RunResult& run) -> std::optional<double> {
      const auto crossing = toy::first_reaching(run.curve, Metric::acc_final, target95);
      return crossing ? std::optional<double>(crossing->modelled_seconds) : std::nullopt;
    }, true);
    result.evaluations_ratio_total = paired(va, vb, [](const RunResult& run) -> std::optional<double> {
      return static_cast<double>(run.evaluations) / run.steps;
    }, true);
    result.speedup_ratio = paired(va, vb, [](const RunResult& run) -> std::optional<double> { return run.curve.back().speedup; }, true);
    out.push_back(result);
  }
  return out;
}

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

// The summary table and the pairs table, as Markdown (readable as text too).
std::string tables(const Options& options, const std::vector<Variant>& variants, const MixStudy& study,
                   const std::vector<PairResult>& pairs) {
  std::ostringstream out;
  const int T = options.max_turns;
  out << "SIMULATED environment, " << mix_name(study.hard) << " mix; seeds " << seeds_text(options.seeds) << " (mean [min, max] over seeds); "
      << options.tasks << " tasks, G = " << options.group_size << ", up to " << T << " turns, " << options.budget
      << " training evaluations per run; turn credit γ = " << options.credit_gamma << "\n";
  char targets[256];
  std::snprintf(targets, sizeof targets,
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
    out << "| " << variants[v].name << " | " << options.learning_rates[s.rate] << " | " << cell(final_value(s, Metric::acc_turn1), "%.3f")
        << " | " << cell(final_value(s, Metric::acc_final), "%.3f");
    for (double budget : fixed_budgets) {
      out << " | " << cell(value_at_budget(s, Metric::acc_turn1, budget), "%.3f") << " / "
          << cell(value_at_budget(s, Metric::acc_final, budget), "%.3f");
    }
    for (Metric metric : {Metric::acc_turn1, Metric::acc_final}) {
      for (double f : target_fractions) out << " | " << cell(evaluations_to(s, metric, study.target(metric, f)), "k", "not reached");
    }
    out << " | " << cell(hours_to(s, Metric::acc_final, study.target(Metric::acc_final, 0.95)), "%.2f", "not reached") << " | "
        << cell(final_speedup(s), "%.2fx") << " | " << cell(evaluations_per_step(s), "%.0f") << " | "
        << cell(repairs_pushed_down(s), "%.2f") << " | " << cell(mean_advantage_rms(s), "%.2f") << " |\n";
  }
  out << "\nPairs (per seed: a / b for evaluations, time and speedup; a - b for final accuracy):\n\n";
  out << "| a vs b | what";
  for (double f : target_fractions) out << " | evals to " << percent_key(f) << " % Acc@1";
  for (double f : target_fractions) out << " | evals to " << percent_key(f) << " % Acc@" << T;
  out << " | modelled time to 95 % Acc@" << T << " | evals / step | final Acc@1 | final Acc@" << T << " | speedup |\n|---|---";
  for (int c = 0; c < 11; ++c) out << "|---";
  out << "|\n";
  for (const PairResult& p : pairs) {
    out << "| " << p.pair.a << " vs " << p.pair.b << " | " << p.pair.what;
    for (int m = 0; m < 2; ++m) {
      for (std::size_t t = 0; t < target_fractions.size(); ++t) out << " | " << cell(p.evaluation_ratio[m][t], "%.2fx");
    }
    out << " | " << cell(p.hours_ratio, "%.2fx") << " | " << cell(p.evaluations_ratio_total, "%.2fx") << " | "
        << cell(p.final_difference[0], "%+.3f") << " | " << cell(p.final_difference[1], "%+.3f") << " | "
        << cell(p.speedup_ratio, "%.2fx") << " |\n";
  }
  char model[320];
  std::snprintf(model, sizeof model,
                "\nModelled wall clock: each evaluation costs %.0f ms of compile time (bench_compile: one worker, each compile in "
                "its own child) plus %.0f ms of GPU time when the candidate compiles (an assumption: correctness trials and "
                "timed runs); one evaluation at a time, no generation time.\n",
                options.compile_ms, options.gpu_ms);
  out << model;
  return out.str();
}

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
      m["evaluations_to_target"]["acc_turn1"][percent_key(f)] = to_json(evaluations_to(s, Metric::acc_turn1, study.target(Metric::acc_turn1, f)));
      m["evaluations_to_target"]["acc_final"][percent_key(f)] = to_json(evaluations_to(s, Metric::acc_final, study.target(Metric::acc_final, f)));
    }
    m["modelled_hours_to_95_acc_final"] = to_json(hours_to(s, Metric::acc_final, study.target(Metric::acc_final, 0.95)));
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
    entry["final_difference"] = {{"acc_turn1", to_json(p.final_difference[0])}, {"acc_final", to_json(p.final_difference[1])}};
    entry["speedup_ratio"] = to_json(p.speedup_ratio);
    j["pairs"].push_back(entry);
  }
  return j;
}

// The seeds' curves on a common grid of evaluations: mean, min and max of Acc@1 and Acc@final.
void write_curves(const std::filesystem::path& data, const Options& options, const std::vector<Variant>& variants,
                  const MixStudy& study) {
  std::ofstream out(data);
  out << "# SIMULATED environment, " << mix_name(study.hard) << " mix, seeds " << seeds_text(options.seeds)
      << ". Columns: training evaluations, Acc@1 mean min max, Acc@final mean min max; one block per variant\n";
  const int cells = 120;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    out << "# " << variants[v].name << " (lr " << options.learning_rates[study.variants[v].rate] << ")\n";
    for (int c = 0; c <= cells; ++c) {
      const double at = static_cast<double>(options.budget) * c / cells;
      const Stats a1 = value_at_budget(study.variants[v], Metric::acc_turn1, at);
      const Stats a3 = value_at_budget(study.variants[v], Metric::acc_final, at);
      if (!a1.complete() || !a3.complete()) continue;
      out << at << ' ' << a1.mean << ' ' << a1.min << ' ' << a1.max << ' ' << a3.mean << ' ' << a3.min << ' ' << a3.max << '\n';
    }
    out << "\n\n";
  }
}

void write_plot(const Options& options, const std::vector<Variant>& variants, const MixStudy& study, bool quiet) {
  const std::filesystem::path dir(options.out_dir);
  const std::string stem = study.hard ? "toy_policy_hard" : "toy_policy";
  const std::filesystem::path data = dir / (stem + ".dat");
  write_curves(data, options, variants, study);
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    if (!quiet) {
      std::fprintf(stderr, "gnuplot is not installed: wrote the data to %s (apt-get install gnuplot-nox for the plot)\n",
                   data.c_str());
    }
    return;
  }
  const std::filesystem::path png = dir / (stem + ".png");
  const std::filesystem::path script = dir / (stem + ".gp");
  static const char* colours[] = {"#7f7f7f", "#9ecae1", "#3182bd", "#08519c", "#fdae6b", "#31a354", "#8c6d31", "#d62728", "#9467bd"};
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1400,560 font ',10' noenhanced\n"
       << "set output '" << png.string() << "'\n"
       << "set multiplot layout 1,2 title 'toy policy on a SIMULATED kernel environment (" << mix_name(study.hard)
       << " mix, seeds " << seeds_text(options.seeds) << ": mean, shaded min-max; G = " << options.group_size << ", "
       << options.tasks << " tasks)'\n"
       << "set key bottom right\nset grid\nset xlabel 'training evaluations'\nset yrange [0:1]\n"
       << "set style fill transparent solid 0.12 noborder\n";
    for (int panel = 0; panel < 2; ++panel) {
      const int mean = panel == 0 ? 2 : 5;
      const double reference = study.reference[static_cast<std::size_t>(panel)];
      gp << "set ylabel '" << (panel == 0 ? std::string("Acc@1 (first turn)") : "Acc@" + std::to_string(options.max_turns) + " (with feedback)")
         << "'\nset arrow 1 from graph 0, first " << 0.95 * reference << " to graph 1, first " << 0.95 * reference
         << " nohead dt 2 lc 'gray'\nplot";
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const char* colour = colours[v % (sizeof colours / sizeof *colours)];
        gp << (v ? "," : "") << " '" << data.string() << "' index " << v << " using 1:" << mean + 1 << ":" << mean + 2
           << " with filledcurves lc rgb '" << colour << "' notitle, '' index " << v << " using 1:" << mean
           << " with lines lw 2 lc rgb '" << colour << "'" << (variants[v].name.rfind("leap", 0) == 0 ? "" : " dt 2") << " title '"
           << variants[v].name << "'";
      }
      gp << "\n";
    }
    gp << "unset multiplot\n";
  }
  const std::string command = "gnuplot '" + script.string() + "'";
  if (std::system(command.c_str()) == 0) {
    if (!quiet) std::fprintf(stderr, "plot: %s (data: %s)\n", png.c_str(), data.c_str());
  } else {
    std::fprintf(stderr, "gnuplot failed; the data is in %s\n", data.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    const auto parsed = parse(argc, argv);
    if (!parsed) return 0;
    options = *parsed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "toy_policy: %s\n", error.what());
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  const std::vector<Variant> variants = make_variants(options);
  std::vector<std::vector<std::vector<toy::Task>>> tasks(options.mixes.size());
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    for (std::uint64_t seed : options.seeds) tasks[mix].push_back(toy::make_tasks(options.tasks, seed, options.mixes[mix]));
  }
  std::vector<RunKey> keys;
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (std::size_t r = 0; r < options.learning_rates.size(); ++r) {
        for (std::size_t s = 0; s < options.seeds.size(); ++s) keys.push_back({mix, v, r, s});
      }
    }
  }
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(
      options.threads > 0 ? static_cast<unsigned>(options.threads) : hardware, keys.size()));
  std::fprintf(stderr, "toy_policy: SIMULATED environment, %zu variants x %zu learning rates x %zu seeds x %zu mix(es) = %zu runs of %lld evaluations, %u thread(s)\n",
               variants.size(), options.learning_rates.size(), options.seeds.size(), options.mixes.size(), keys.size(),
               static_cast<long long>(options.budget), threads);
  const std::vector<RunResult> results = run_all(options, keys, tasks, variants, threads);

  std::filesystem::create_directories(options.out_dir);
  const std::vector<Pair> pair_list = make_pairs(options, variants);
  nlohmann::json all;
  std::string text;
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    const MixStudy study = summarise(options, mix, keys, results, variants.size());
    const std::vector<PairResult> pairs = compare_pairs(pair_list, variants, study);
    const std::string table = tables(options, variants, study, pairs);
    text += (mix ? "\n" : "") + table;
    std::ofstream(std::filesystem::path(options.out_dir) / (study.hard ? "summary_hard.md" : "summary.md")) << table;
    nlohmann::json j = study_json(options, variants, study, pairs);
    if (options.mixes.size() == 1) {
      all = j;
    } else {
      all["mixes"][mix_name(study.hard)] = j;
    }
    write_plot(options, variants, study, options.json);
  }
  std::ofstream(std::filesystem::path(options.out_dir) / "summary.json") << all.dump(1) << '\n';
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.json) {
    std::cout << all.dump() << std::endl;
  } else {
    std::cout << text;
    std::printf("\n%zu runs in %.1f s; tables and summary.json also in %s\n", keys.size(), seconds, options.out_dir.c_str());
  }
  return 0;
}
