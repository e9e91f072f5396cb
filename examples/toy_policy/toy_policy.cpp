// SPDX-License-Identifier: Apache-2.0
// toy_policy: a small softmax policy learns to "write kernels" in a SIMULATED environment, trained
// three ways on the same tasks and seeds:
//   single_turn  GRPO on a binary reward, one turn per sample (no debugging turns)
//   multi_turn   GRPO on a turn-discounted binary reward, every group expanded to max_turns
//   leap         LEAP: DCP gate (expand a group only when at least half of it failed turn 1, and not
//                all of it), rank-based advantage (earlier success > later success > failure, then
//                speedup and tokens), turn credit
//   leap_unpruned  the ablation: LEAP's advantage and turn credit, every group expanded
// and reports accuracy against evaluations spent, with a table, a data file and (with gnuplot) a plot.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <leap/leap.hpp>
#include <leap/rollout.hpp>
#include <nlohmann/json.hpp>

#include "simulated_kernel_env.hpp"
#include "softmax_policy.hpp"

namespace {

struct Options {
  std::uint64_t seed = 1;
  int steps = 120;
  int tasks = 40;
  int group_size = 8;
  int max_turns = 3;
  int eval_every = 1;
  int eval_samples = 16;
  int threads = 0;  // 0: one per hardware thread
  std::vector<double> learning_rates = {0.1, 0.3, 1.0, 3.0};  // each method is reported at its best one
  double gamma = 0.9;   // turn credit, and the multi-turn baseline's reward discount per extra turn
  double target = 0.0;  // Acc@final to reach; 0: 97 % of the best final Acc@final of any run
  bool json = false;
  bool hard_recoverable = false;
  bool turns_only = false;  // LEAP's order exactly as published, without the speedup and token keys
  std::string out_dir = "toy_policy_out";
};

void print_help() {
  std::printf(
      "toy_policy - LEAP against GRPO baselines on a SIMULATED kernel-writing environment\n\n"
      "Options:\n"
      "  --seed N          random seed for tasks, sampling and evaluation (default 1)\n"
      "  --steps N         training steps per method (default 120)\n"
      "  --tasks N         tasks in the simulated set (default 40)\n"
      "  --group-size N    samples per task and step, G (default 8)\n"
      "  --max-turns N     turns of an expanded trajectory (default 3)\n"
      "  --eval-every N    evaluate every N steps (default 1)\n"
      "  --threads N       evaluation threads (default: hardware threads); results do not depend on it\n"
      "  --lr X[,Y...]     learning rates to try; each method is reported at the one that reaches the\n"
      "                    target in the fewest evaluations (default 0.1,0.3,1,3: the advantages of\n"
      "                    the methods differ in scale, so one shared rate would favour one of them)\n"
      "  --target X        Acc@final to reach (default: 97 %% of the best final Acc@final of any run)\n"
      "  --out DIR         where the data file and the plot go (default toy_policy_out)\n"
      "  --hard            recoverable tasks rarely succeed on turn 1 (their groups then often fail\n"
      "                    entirely, which LEAP's default band prunes as catastrophic)\n"
      "  --turns-only      rank by turn alone (LEAP as published) instead of turn, speedup, tokens\n"
      "  --json            print one JSON summary on stdout instead of the table\n");
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
      const int n = std::stoi(text);
      if (n < 1) throw std::invalid_argument(arg + " must be >= 1, got " + text);
      return n;
    };
    if (arg == "--help" || arg == "-h") {
      print_help();
      return std::nullopt;
    } else if (arg == "--seed") {
      options.seed = std::stoull(value());
    } else if (arg == "--steps") {
      options.steps = positive(value());
    } else if (arg == "--tasks") {
      options.tasks = positive(value());
    } else if (arg == "--group-size") {
      options.group_size = positive(value());
    } else if (arg == "--max-turns") {
      options.max_turns = positive(value());
    } else if (arg == "--eval-every") {
      options.eval_every = positive(value());
    } else if (arg == "--threads") {
      options.threads = positive(value());
    } else if (arg == "--lr") {
      options.learning_rates.clear();
      std::string list = value();
      for (std::size_t begin = 0; begin <= list.size();) {
        const std::size_t comma = std::min(list.find(',', begin), list.size());
        const double rate = std::stod(list.substr(begin, comma - begin));
        if (!(rate > 0.0)) throw std::invalid_argument("--lr: learning rates must be > 0, got " + list);
        options.learning_rates.push_back(rate);
        begin = comma + 1;
      }
    } else if (arg == "--target") {
      options.target = std::stod(value());
    } else if (arg == "--out") {
      options.out_dir = value();
    } else if (arg == "--turns-only") {
      options.turns_only = true;
    } else if (arg == "--hard") {
      options.hard_recoverable = true;
    } else if (arg == "--json") {
      options.json = true;
    } else {
      throw std::invalid_argument("unknown option " + arg + " (see --help)");
    }
  }
  return options;
}

struct Point {
  int step = 0;
  std::int64_t evaluations = 0;  // training evaluations spent so far
  double acc_turn1 = 0.0;        // held-out evaluation, first turn only
  double acc_final = 0.0;        // held-out evaluation with feedback, up to max_turns
  double speedup = 0.0;          // geometric mean speedup of the evaluation's correct kernels
};

struct MethodResult {
  std::string name;
  double learning_rate = 0.0;
  std::vector<Point> history;
  std::int64_t evaluations = 0;
  std::array<int, leap::gate_reason_count> groups_by_reason{};
  int groups = 0;
  // Gate decisions by the task's hidden difficulty: [difficulty][expansion].
  std::array<std::array<int, leap::all_expansions.size()>, 3> decisions_by_difficulty{};
};

// The multi-turn baseline's reward: 1 for a success at turn 1, gamma^(k-1) at turn k, 0 unsolved.
struct DiscountedSolvedReward {
  double gamma = 0.9;
  double operator()(const leap::Outcome& outcome) const noexcept {
    return outcome.solved() ? std::pow(gamma, outcome.solved_turn - 1) : 0.0;
  }
};

class Trainer {
 public:
  Trainer(const Options& options, const std::vector<toy::Task>& tasks, leap::ThreadPool* pool)
      : options_(options), tasks_(tasks), pool_(pool) {}

  template <class Gate, class Advantage>
  auto run(const toy::SoftmaxPolicy& policy, Gate& gate, const Advantage& advantage, const leap::RolloutOptions& rollout) const {
    if (pool_ != nullptr) return leap::run_step(tasks_, policy, environment_, gate, advantage, *pool_, rollout);
    return leap::run_step(tasks_, policy, environment_, gate, advantage, leap::InlineExecutor{}, rollout);
  }

  // Accuracy of the current policy on every task, the same random draws at every call.
  Point evaluate(const toy::SoftmaxPolicy& policy) const {
    leap::RolloutOptions eval;
    eval.group_size = options_.eval_samples;
    eval.max_turns = options_.max_turns;
    eval.seed = options_.seed ^ 0xe7a1ull;
    leap::AlwaysExpand expand_all;
    auto result = run(policy, expand_all, leap::RankAdvantage<>{}, eval);
    double log_sum = 0.0;
    int solved = 0;
    for (const leap::Outcome& outcome : result.outcomes) {
      if (outcome.solved() && outcome.speedup > 0.0) {
        log_sum += std::log(outcome.speedup);
        ++solved;
      }
    }
    const double speedup = solved > 0 ? std::exp(log_sum / solved) : 0.0;
    return {0, 0, result.metrics.accuracy_at(1), result.metrics.accuracy_at(options_.max_turns), speedup};
  }

  template <class Gate, class Advantage>
  MethodResult train(const std::string& name, Gate gate, const Advantage& advantage, int max_turns, double learning_rate) {
    MethodResult method;
    method.name = name;
    method.learning_rate = learning_rate;
    toy::SoftmaxPolicy policy(static_cast<int>(tasks_.size()));
    Point start = evaluate(policy);
    method.history.push_back(start);
    for (int step = 1; step <= options_.steps; ++step) {
      leap::RolloutOptions rollout;
      rollout.group_size = options_.group_size;
      rollout.max_turns = max_turns;
      rollout.gamma = options_.gamma;
      rollout.seed = options_.seed;
      rollout.step = static_cast<std::uint64_t>(step);
      auto result = run(policy, gate, advantage, rollout);
      policy.update(result, learning_rate, options_.group_size);
      method.evaluations += result.metrics.evaluations;
      for (std::size_t r = 0; r < leap::gate_reason_count; ++r) method.groups_by_reason[r] += result.metrics.groups_by_reason[r];
      method.groups += result.metrics.tasks;
      for (std::size_t t = 0; t < tasks_.size(); ++t) {
        ++method.decisions_by_difficulty[static_cast<std::size_t>(tasks_[t].difficulty)]
                                        [static_cast<std::size_t>(result.decisions[t].expansion)];
      }
      if (step % options_.eval_every == 0 || step == options_.steps) {
        Point point = evaluate(policy);
        point.step = step;
        point.evaluations = method.evaluations;
        method.history.push_back(point);
        if (!options_.json) {
          std::fprintf(stderr, "\r[%-11s lr %-4g] step %4d/%d  Acc@1 %.3f  Acc@%d %.3f  evaluations %lld   ", name.c_str(),
                       learning_rate, step, options_.steps, point.acc_turn1, options_.max_turns, point.acc_final,
                       static_cast<long long>(method.evaluations));
        }
      }
    }
    if (!options_.json) std::fprintf(stderr, "\n");
    return method;
  }

 private:
  const Options& options_;
  const std::vector<toy::Task>& tasks_;
  leap::ThreadPool* pool_;
  toy::SimulatedKernelEnvironment environment_;
};

// The first evaluation point at which Acc@final reaches the target, if any.
const Point* first_reaching(const MethodResult& method, double target) {
  for (const Point& point : method.history) {
    if (point.acc_final >= target) return &point;
  }
  return nullptr;
}

void write_plot(const Options& options, const std::vector<MethodResult>& methods, double target) {
  std::filesystem::create_directories(options.out_dir);
  const std::filesystem::path data = std::filesystem::path(options.out_dir) / "toy_policy.dat";
  {
    std::ofstream out(data);
    out << "# SIMULATED environment. Columns: step, training evaluations, Acc@1, Acc@final; one block per method\n";
    for (const MethodResult& method : methods) {
      out << "# " << method.name << "\n";
      for (const Point& p : method.history) {
        out << p.step << ' ' << p.evaluations << ' ' << p.acc_turn1 << ' ' << p.acc_final << '\n';
      }
      out << "\n\n";
    }
  }
  const std::filesystem::path png = std::filesystem::path(options.out_dir) / "toy_policy.png";
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "gnuplot is not installed: wrote the data to %s (apt-get install gnuplot-nox for the plot)\n",
                 data.c_str());
    return;
  }
  const std::filesystem::path script = std::filesystem::path(options.out_dir) / "toy_policy.gp";
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1200,480 font ',10' noenhanced\n"
       << "set output '" << png.string() << "'\n"
       << "set multiplot layout 1,2 title 'toy policy on a SIMULATED kernel environment (seed " << options.seed
       << ", G = " << options.group_size << ", " << options.tasks << " tasks)'\n"
       << "set key bottom right\nset grid\nset xlabel 'training evaluations'\nset yrange [0:1]\n"
       << "set ylabel 'Acc@" << options.max_turns << " (with feedback)'\n"
       << "set arrow from graph 0, first " << target << " to graph 1, first " << target << " nohead dt 2 lc 'gray'\n"
       << "plot";
    for (std::size_t m = 0; m < methods.size(); ++m) {
      gp << (m ? "," : "") << " '" << data.string() << "' index " << m << " using 2:4 with lines lw 2 title '"
         << methods[m].name << "'";
    }
    gp << "\nunset arrow\nset ylabel 'Acc@1 (first turn)'\nplot";
    for (std::size_t m = 0; m < methods.size(); ++m) {
      gp << (m ? "," : "") << " '" << data.string() << "' index " << m << " using 2:3 with lines lw 2 title '"
         << methods[m].name << "'";
    }
    gp << "\nunset multiplot\n";
  }
  const std::string command = "gnuplot '" + script.string() + "'";
  if (std::system(command.c_str()) == 0) {
    std::fprintf(stderr, "plot: %s (data: %s)\n", png.c_str(), data.c_str());
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
  const std::vector<toy::Task> tasks = toy::make_tasks(options.tasks, options.seed, options.hard_recoverable);
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads) : hardware;
  std::unique_ptr<leap::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<leap::ThreadPool>(threads - 1);  // the caller works too
  Trainer trainer(options, tasks, pool.get());
  if (!options.json) {
    std::fprintf(stderr, "toy_policy: %d SIMULATED tasks, G = %d, up to %d turns, %d steps per method, %u thread(s)\n",
                 options.tasks, options.group_size, options.max_turns, options.steps, threads);
  }

  // Every method at every learning rate, on the same tasks and seeds.
  std::vector<std::vector<MethodResult>> runs(4);
  const leap::RankAdvantage<> rank{options.turns_only ? leap::KernelOrder::turns_only()
                                                       : leap::KernelOrder::with_speedup_and_tokens()};
  for (double rate : options.learning_rates) {
    runs[0].push_back(trainer.train("single_turn", leap::NeverExpand{}, leap::GrpoAdvantage<>{}, 1, rate));
    runs[1].push_back(trainer.train("multi_turn", leap::AlwaysExpand{},
                                    leap::GrpoAdvantage<DiscountedSolvedReward>{{options.gamma}, {}}, options.max_turns, rate));
    runs[2].push_back(trainer.train("leap", leap::FailBandGate::leap_default(options.group_size), rank,
                                    options.max_turns, rate));
    // The ablation: LEAP's reward and turn credit with every group expanded, to tell the effect of
    // pruning from the effect of ranking.
    runs[3].push_back(trainer.train("leap_unpruned", leap::AlwaysExpand{}, rank, options.max_turns, rate));
  }

  double target = options.target;
  if (target <= 0.0) {
    double best = 0.0;
    for (const auto& method_runs : runs) {
      for (const MethodResult& run : method_runs) best = std::max(best, run.history.back().acc_final);
    }
    target = 0.97 * best;
  }
  // Each method at its best learning rate: fewest evaluations to the target, else the best final Acc@final.
  auto better = [&](const MethodResult& a, const MethodResult& b) {
    const Point* reached_a = first_reaching(a, target);
    const Point* reached_b = first_reaching(b, target);
    if (reached_a && reached_b) return reached_a->evaluations < reached_b->evaluations;
    if (reached_a || reached_b) return reached_a != nullptr;
    return a.history.back().acc_final > b.history.back().acc_final;
  };
  std::vector<MethodResult> methods;
  for (const auto& method_runs : runs) {
    methods.push_back(*std::min_element(method_runs.begin(), method_runs.end(), better));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  nlohmann::json summary;
  summary["environment"] = "simulated";
  summary["seed"] = options.seed;
  summary["tasks"] = options.tasks;
  summary["group_size"] = options.group_size;
  summary["max_turns"] = options.max_turns;
  summary["hard_recoverable"] = options.hard_recoverable;
  summary["leap_order"] = options.turns_only ? "turns_only" : "turn, speedup (5 %), tokens";
  summary["target_acc_final"] = target;
  for (const MethodResult& m : methods) {
    const Point& last = m.history.back();
    const Point* reached = first_reaching(m, target);
    nlohmann::json entry{{"learning_rate", m.learning_rate},
                         {"acc_turn1", last.acc_turn1},
                         {"acc_final", last.acc_final},
                         {"evaluations", m.evaluations},
                         {"steps", options.steps},
                         {"steps_to_target", reached ? nlohmann::json(reached->step) : nlohmann::json(nullptr)},
                         {"evaluations_to_target", reached ? nlohmann::json(reached->evaluations) : nlohmann::json(nullptr)},
                         {"speedup", last.speedup}};
    nlohmann::json reasons = nlohmann::json::object();
    for (std::size_t r = 0; r < leap::gate_reason_count; ++r) {
      if (m.groups_by_reason[r] > 0) reasons[std::string(leap::to_string(static_cast<leap::GateReason>(r)))] = m.groups_by_reason[r];
    }
    entry["groups"] = m.groups;
    for (std::size_t d = 0; d < 3; ++d) {
      for (leap::Expansion e : leap::all_expansions) {
        entry["decisions_by_difficulty"][toy::to_string(static_cast<toy::Difficulty>(d))][std::string(leap::to_string(e))] =
            m.decisions_by_difficulty[d][static_cast<std::size_t>(e)];
      }
    }
    entry["groups_by_reason"] = reasons;
    summary["methods"][m.name] = entry;
  }

  if (options.json) {
    std::cout << summary.dump() << std::endl;
  } else {
    std::printf("\nSIMULATED environment, seed %llu: %d tasks, G = %d, up to %d turns, %d steps, %.1f s\n",
                static_cast<unsigned long long>(options.seed), options.tasks, options.group_size, options.max_turns,
                options.steps, seconds);
    std::printf("target: Acc@%d >= %.3f\n\n", options.max_turns, target);
    std::printf("%-14s %5s %7s %10s %9s %12s %16s %22s\n", "method", "lr", "Acc@1", "Acc@final", "speedup", "evaluations",
                "steps to target", "evaluations to target");
    for (const MethodResult& m : methods) {
      const Point& last = m.history.back();
      const Point* reached = first_reaching(m, target);
      char steps_text[32] = "not reached";
      char evals_text[32] = "not reached";
      if (reached) {
        std::snprintf(steps_text, sizeof steps_text, "%d", reached->step);
        std::snprintf(evals_text, sizeof evals_text, "%lld", static_cast<long long>(reached->evaluations));
      }
      std::printf("%-14s %5g %7.3f %10.3f %8.2fx %12lld %16s %22s\n", m.name.c_str(), m.learning_rate, last.acc_turn1,
                  last.acc_final, last.speedup, static_cast<long long>(m.evaluations), steps_text, evals_text);
    }
    const MethodResult& leap_run = methods[2];
    auto share = [&](leap::GateReason reason) {
      return 100.0 * leap_run.groups_by_reason[static_cast<std::size_t>(reason)] / std::max(1, leap_run.groups);
    };
    std::printf("\nDCP in the leap run: %.0f %% of groups expanded (at least half failed turn 1), %.0f %% pruned as easy "
                "(fewer than half failed), %.0f %% pruned as catastrophic (all failed). By the tasks' hidden difficulty:\n",
                share(leap::GateReason::in_band), share(leap::GateReason::too_few_failures),
                share(leap::GateReason::too_many_failures));
    for (std::size_t d = 0; d < 3; ++d) {
      const auto& row = leap_run.decisions_by_difficulty[d];
      int total = 0;
      for (int count : row) total += count;
      auto percent = [&](leap::Expansion e) { return 100.0 * row[static_cast<std::size_t>(e)] / std::max(1, total); };
      std::printf("  %-12s %3.0f %% expanded, %3.0f %% pruned easy, %3.0f %% pruned catastrophic\n",
                  toy::to_string(static_cast<toy::Difficulty>(d)), percent(leap::Expansion::expand),
                  percent(leap::Expansion::prune_easy), percent(leap::Expansion::prune_catastrophic));
    }
  }
  write_plot(options, methods, target);
  return 0;
}
