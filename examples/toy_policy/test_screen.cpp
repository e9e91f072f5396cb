// SPDX-License-Identifier: Apache-2.0
// The screen toy_policy ends with: built from a real (small) study, it must fit a terminal and carry
// the very numbers the paired comparisons computed; and the options that choose it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "claims.hpp"
#include "options.hpp"
#include "pairs.hpp"
#include "plot.hpp"
#include "run_all.hpp"
#include "screen.hpp"
#include "study.hpp"

using namespace toy;

namespace {

// A study small enough for a unit test, shaped like --study: two mixes, five seeds and five learning
// rates, so that every line has its widest form ("4/5", two mix columns, the whole grid).
struct SmallStudy {
  Options options;
  std::vector<Variant> variants;
  std::vector<RunResult> results;
  std::vector<MixStudy> studies;
  std::vector<std::vector<PairResult>> pairs;

  SmallStudy() {
    // --study's own seeds, learning-rate grid and mixes (the setup line lists the grid), on a budget
    // and task set small enough for a unit test.
    std::vector<std::string> args = {"toy_policy",   "--study", "--budget",        "800", "--tasks",        "8",
                                     "--group-size", "4",       "--eval-interval", "200", "--eval-samples", "4",
                                     "--threads",    "2"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    options = parse(static_cast<int>(argv.size()), argv.data()).value();
    variants = make_variants(options);
    std::vector<std::vector<std::vector<Task>>> tasks(options.mixes.size());
    for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
      for (std::uint64_t seed : options.seeds)
        tasks[mix].push_back(make_tasks(options.tasks, seed, options.mixes[mix]));
    }
    const std::vector<RunKey> keys = every_run(options, variants.size());
    results = run_all(options, keys, tasks, variants, thread_count(options, keys.size()));
    const std::vector<Pair> pair_list = make_pairs(options, variants);
    for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
      studies.push_back(summarise(options, mix, keys, results, variants.size()));
      pairs.push_back(compare_pairs(pair_list, variants, studies.back()));
    }
  }

  const PairResult& pair(std::size_t mix, const std::string& a, const std::string& b) const {
    const auto found = std::find_if(pairs[mix].begin(), pairs[mix].end(),
                                    [&](const PairResult& p) { return p.pair.a == a && p.pair.b == b; });
    REQUIRE(found != pairs[mix].end());
    return *found;
  }
};

const SmallStudy& small_study() {
  static const SmallStudy study;
  return study;
}

RunReport report_for(const Options& options, Plot::Status status) {
  RunReport report;
  report.tables = {"toy_policy_out/summary.md", "toy_policy_out/summary_hard.md"};
  report.tables.resize(options.mixes.size());
  report.json = "toy_policy_out/summary.json";
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    const std::string stem = mix == 0 ? "toy_policy_out/toy_policy" : "toy_policy_out/toy_policy_hard";
    report.plots.push_back({stem + ".dat", status == Plot::Status::drawn ? stem + ".png" : "", status});
  }
  report.runs = 90;
  report.threads = 2;
  report.seconds = 1234.4;
  report.cpu_seconds = 2345.6;
  return report;
}

// The lines that start with `prefix`, in order.
std::vector<std::string> lines_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> found;
  for (const std::string& line : lines) {
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  }
  return found;
}

bool contains(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a ratio cell reads mean, the seeds' range and how many seeds had a value") {
  CHECK(ratio_cell(Stats{0.77, 0.61, 1.03, 3, 3}) == "0.77x [0.61, 1.03]");
  CHECK(ratio_cell(Stats{0.69, 0.69, 0.69, 1, 3}) == "0.69x 1/3");
  CHECK(ratio_cell(Stats{0.5, 0.4, 0.6, 2, 5}) == "0.50x [0.40, 0.60] 2/5");
  CHECK(ratio_cell(stats_of(std::vector<std::optional<double>>{std::nullopt, std::nullopt})) == "-");
  CHECK(difference_cell(Stats{0.003, -0.016, 0.019, 3, 3}) == "+0.003 [-0.016, +0.019]");
}

TEST_CASE("the screen of a two-mix, five-seed study fits 30 lines of 100 ASCII characters") {
  const SmallStudy& s = small_study();
  for (const Plot::Status status : {Plot::Status::drawn, Plot::Status::no_gnuplot, Plot::Status::gnuplot_failed}) {
    const Claims claims = gather_claims(s.options, s.variants, s.studies, s.pairs);
    const std::vector<std::string> lines = screen_lines(s.options, claims, report_for(s.options, status));
    CAPTURE(static_cast<int>(status));
    // One more line goes before it: the run's first line on stderr.
    CHECK(lines.size() + 1 <= 30);
    for (const std::string& line : lines) {
      CAPTURE(line);
      CHECK(line.size() <= 100);
      CHECK(std::all_of(line.begin(), line.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    }
  }
}

TEST_CASE("the screen answers each claim with the paired comparisons' own numbers, for every mix") {
  const SmallStudy& s = small_study();
  const Claims claims = gather_claims(s.options, s.variants, s.studies, s.pairs);
  const std::vector<std::string> lines = screen_lines(s.options, claims, report_for(s.options, Plot::Status::drawn));
  for (std::size_t b = 0; b < s.options.reward_gammas.size(); ++b) {
    const double gamma = s.options.reward_gammas[b];
    const std::string baseline = "multi_turn_g" + gamma_text(gamma);
    const std::vector<std::string> rows = lines_starting(lines, "  vs GRPO, discount " + gamma_text(gamma));
    REQUIRE(rows.size() == 2);  // Acc@1, then Acc@final
    for (std::size_t mix = 0; mix < s.studies.size(); ++mix) {
      const PairResult& p = s.pair(mix, "leap", baseline);
      CAPTURE(rows[0], rows[1], mix);
      CHECK(contains(rows[0], ratio_cell(p.evaluation_ratio[0][acc_turn1_target])));
      CHECK(contains(rows[1], ratio_cell(p.evaluation_ratio[1][acc_final_target])));
      // "reached": each side's own count of seeds reaching the target.
      const std::size_t leap = index_of(s.variants, "leap");
      const std::size_t grpo = index_of(s.variants, baseline);
      const double target1 = s.studies[mix].target(Metric::acc_turn1, target_fractions[acc_turn1_target]);
      CHECK(claims.acc_turn1.reach[b][mix].leap_reached ==
            evaluations_to(s.studies[mix].variants[leap], Metric::acc_turn1, target1).present);
      CHECK(claims.acc_turn1.reach[b][mix].baseline_reached ==
            evaluations_to(s.studies[mix].variants[grpo], Metric::acc_turn1, target1).present);
    }
  }
  // DCP: the rank twins first, then GRPO's; each row carries both mixes' cells.
  const std::vector<std::string> per_step = lines_starting(lines, "    evaluations per step");
  const std::vector<std::string> time = lines_starting(lines, "    modelled time to 95 % Acc@3");
  const std::vector<std::string> accuracy = lines_starting(lines, "    final Acc@3, pruned - unpruned");
  REQUIRE(per_step.size() == 2);
  REQUIRE(time.size() == 2);
  REQUIRE(accuracy.size() == 2);
  const std::pair<std::string, std::string> twins[] = {{"leap", "leap_unpruned"}, {"grpo_dcp_g0.9", "multi_turn_g0.9"}};
  for (std::size_t t = 0; t < 2; ++t) {
    for (std::size_t mix = 0; mix < s.studies.size(); ++mix) {
      const PairResult& p = s.pair(mix, twins[t].first, twins[t].second);
      CHECK(contains(per_step[t], ratio_cell(p.evaluations_ratio_total)));
      CHECK(contains(time[t], ratio_cell(p.hours_ratio)));
      CHECK(contains(accuracy[t], difference_cell(p.final_difference[1])));
    }
  }
  // Pruning does spend fewer evaluations per step than expanding every group: the row is not empty.
  CHECK(claims.dcp.at(0).per_step.at(0).complete());
  CHECK(claims.dcp.at(0).per_step.at(0).max < 1.0);
}

TEST_CASE("a convergence row shows LEAP's count of seeds reaching the target, then GRPO's") {
  // Hand-made claims, one mix and one baseline, so that the two counts differ and cannot be swapped
  // unnoticed.
  Options options;
  options.seeds = {1, 2, 3, 4, 5};
  options.reward_gammas = {0.5};
  Claims claims;
  claims.mixes = {"default"};
  claims.seeds = 5;
  for (ConvergenceClaim* claim : {&claims.acc_turn1, &claims.acc_final}) {
    claim->fraction = 0.9;
    claim->target = {0.5};
    claim->baseline_gamma = {0.5};
  }
  claims.acc_turn1.metric = Metric::acc_turn1;
  claims.acc_final.metric = Metric::acc_final;
  claims.acc_turn1.reach = {{Reach{Stats{0.5, 0.4, 0.6, 2, 5}, 4, 2}}};
  claims.acc_final.reach = {{Reach{Stats{}, 0, 5}}};
  const std::vector<std::string> rows = lines_starting(
      screen_lines(options, claims, report_for(options, Plot::Status::drawn)), "  vs GRPO, discount 0.5");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].find("0.50x [0.40, 0.60] 2/5") != std::string::npos);
  CHECK(rows[0].substr(rows[0].size() - 8) == "4/5  2/5");
  CHECK(rows[1].find(" - ") != std::string::npos);  // LEAP never reached it: no ratio
  CHECK(rows[1].substr(rows[1].size() - 8) == "0/5  5/5");
}

TEST_CASE("the screen ends with where the tables and the plot are and how long the run took") {
  const SmallStudy& s = small_study();
  const Claims claims = gather_claims(s.options, s.variants, s.studies, s.pairs);
  const std::vector<std::string> drawn = screen_lines(s.options, claims, report_for(s.options, Plot::Status::drawn));
  REQUIRE(drawn.size() >= 3);
  const std::string& tables = drawn[drawn.size() - 3];
  CHECK(contains(tables, "toy_policy_out/summary.md"));
  CHECK(contains(tables, "summary_hard.md"));
  CHECK(contains(tables, "summary.json"));
  CHECK(contains(tables, "--tables"));
  CHECK(contains(drawn[drawn.size() - 2], "toy_policy_out/toy_policy.png, toy_policy_hard.png"));
  CHECK(drawn.back() == "90 runs in 1234 s (2346 CPU-s on 2 threads)");

  const std::vector<std::string> none =
      screen_lines(s.options, claims, report_for(s.options, Plot::Status::no_gnuplot));
  CHECK(contains(none[none.size() - 3], "gnuplot is not installed"));
  CHECK(contains(none[none.size() - 2], "toy_policy_out/toy_policy.dat, toy_policy_hard.dat"));
}

TEST_CASE("the options --tables and --study choose the output and the study, independently") {
  const auto parse_args = [](std::vector<std::string> args) {
    args.insert(args.begin(), "toy_policy");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    return parse(static_cast<int>(argv.size()), argv.data()).value();
  };
  const Options plain = parse_args({});
  CHECK_FALSE(plain.tables);
  CHECK(plain.mixes.size() == 1);
  const Options tables = parse_args({"--tables"});
  CHECK(tables.tables);
  CHECK(tables.seeds == plain.seeds);
  const Options study = parse_args({"--study"});
  CHECK_FALSE(study.tables);
  CHECK(study.mixes == std::vector<bool>{false, true});
  CHECK(study.seeds.size() == 5);
  const Options both = parse_args({"--study", "--tables"});
  CHECK(both.tables);
  CHECK(both.mixes.size() == 2);
}
