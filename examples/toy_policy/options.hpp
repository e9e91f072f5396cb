// SPDX-License-Identifier: Apache-2.0
// The toy study's command line: what a run trains, for how long, and what it prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace toy {

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
  double compile_ms = 48.0;  // bench_compile: one compile at a time, each in its own child, 20.9 per second
  double gpu_ms = 100.0;     // assumed GPU time (trials + timed runs) of a candidate that compiles
  bool json = false;
  bool tables = false;  // the full tables on stdout instead of the short screen of claims
  std::string out_dir = "toy_policy_out";
};

void print_help();

// The options, or nullopt when --help was asked for (and printed). Throws std::invalid_argument,
// naming the option and the value, for anything it refuses.
std::optional<Options> parse(int argc, char** argv);

}  // namespace toy
