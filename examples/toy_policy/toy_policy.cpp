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
// its best rate. Outputs: a short screen of the method's claims and their answers (claims.hpp,
// screen.hpp), one summary table and one table of paired comparisons (tables.hpp, --tables), a JSON
// summary (summary_json.hpp, --json), a data file and a plot (gnuplot) of Acc@1 and Acc@3 against
// training evaluations with the seeds' range shaded (plot.hpp).
// The files: options (the command line), variants, runner (one run), run_all (every run, in threads,
// with progress), study (each variant at its best rate, per-seed statistics), pairs (paired
// comparisons), and the outputs above; this file only wires them together.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claims.hpp"
#include "options.hpp"
#include "pairs.hpp"
#include "plot.hpp"
#include "run_all.hpp"
#include "screen.hpp"
#include "study.hpp"
#include "summary_json.hpp"
#include "tables.hpp"
#include "variants.hpp"

int main(int argc, char** argv) {
  using namespace toy;
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
  const std::clock_t cpu_start = std::clock();
  const std::vector<Variant> variants = make_variants(options);
  std::vector<std::vector<std::vector<Task>>> tasks(options.mixes.size());
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    for (std::uint64_t seed : options.seeds) tasks[mix].push_back(make_tasks(options.tasks, seed, options.mixes[mix]));
  }
  const std::vector<RunKey> keys = every_run(options, variants.size());
  const unsigned threads = thread_count(options, keys.size());
  std::fprintf(stderr, "toy_policy: %zu runs (%zu variants x %zu rates x %zu seeds x %zu mix%s), %u thread%s\n",
               keys.size(), variants.size(), options.learning_rates.size(), options.seeds.size(), options.mixes.size(),
               options.mixes.size() == 1 ? "" : "es", threads, threads == 1 ? "" : "s");
  const std::vector<RunResult> results = run_all(options, keys, tasks, variants, threads);

  const std::filesystem::path out_dir(options.out_dir);
  std::filesystem::create_directories(out_dir);
  const std::vector<Pair> pair_list = make_pairs(options, variants);
  nlohmann::json all;
  std::string text;
  std::vector<MixStudy> studies;
  std::vector<std::vector<PairResult>> pairs;
  RunReport report;
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    const MixStudy& study = studies.emplace_back(summarise(options, mix, keys, results, variants.size()));
    const std::vector<PairResult>& mix_pairs = pairs.emplace_back(compare_pairs(pair_list, variants, study));
    const std::string table = tables(options, variants, study, mix_pairs);
    text += (mix ? "\n" : "") + table;
    const std::filesystem::path markdown = out_dir / (study.hard ? "summary_hard.md" : "summary.md");
    std::ofstream(markdown) << table;
    report.tables.push_back(markdown.string());
    nlohmann::json j = study_json(options, variants, study, mix_pairs);
    if (options.mixes.size() == 1) {
      all = j;
    } else {
      all["mixes"][mix_name(study.hard)] = j;
    }
    const Plot& plot = report.plots.emplace_back(write_plot(options, variants, study));
    // The screen says where the plot is; with --tables that news goes to stderr, as before the screen
    // existed, and --json keeps stderr for failures only.
    if ((options.tables && !options.json) || (options.json && plot.status == Plot::Status::gnuplot_failed)) {
      std::fprintf(stderr, "%s\n", describe(plot).c_str());
    }
  }
  const std::filesystem::path json_path = out_dir / "summary.json";
  std::ofstream(json_path) << all.dump(1) << '\n';
  report.json = json_path.string();
  report.runs = keys.size();
  report.threads = threads;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  if (options.json) {
    std::cout << all.dump() << std::endl;
  } else if (options.tables) {
    std::cout << text;
    std::printf("\n%zu runs in %.1f s; tables and summary.json also in %s\n", keys.size(), report.seconds,
                options.out_dir.c_str());
  } else {
    for (const std::string& line : screen_lines(options, gather_claims(options, variants, studies, pairs), report)) {
      std::cout << line << '\n';
    }
  }
  return 0;
}
