// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace toy {

namespace {

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
  if (std::adjacent_find(seeds.begin(), seeds.end()) != seeds.end())
    throw std::invalid_argument("--seeds: a seed is listed twice");
  return seeds;
}

double parse_number(const std::string& option, const std::string& text) {
  const std::vector<double> values = parse_numbers(option, text);
  if (values.size() != 1) throw std::invalid_argument(option + " takes one number, got '" + text + "'");
  return values.front();
}

}  // namespace

void print_help() {
  std::printf(
      "toy_policy - LEAP against GRPO baselines on a SIMULATED kernel-writing environment\n\n"
      "Options:\n"
      "  --seeds LIST      seeds, e.g. 1-5 or 1,4,9 (default 1-3); runs go in parallel threads\n"
      "  --budget N        training evaluations per run (default 48000)\n"
      "  --lr LIST         learning rates, each variant reported at its best (default 1,3,10)\n"
      "  --study           the full study: --seeds 1-5 --lr 0.3,1,3,10,30 --budget 60000, default and\n"
      "                    hard mixes (the same short screen, one column per mix)\n"
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
      "  --tables          print the full tables (summary.md) instead of the short screen of claims\n"
      "  --json            print one JSON summary on stdout instead of the screen\n");
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
      if (used != text.size() || n < 1)
        throw std::invalid_argument(arg + " must be an integer >= 1, got '" + text + "'");
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
    } else if (arg == "--tables") {
      options.tables = true;
    } else {
      throw std::invalid_argument("unknown option " + arg + " (see --help)");
    }
  }
  if (!(options.compile_ms >= 0.0) || !(options.gpu_ms >= 0.0))
    throw std::invalid_argument("--compile-ms and --gpu-ms must be >= 0");
  return options;
}

}  // namespace toy
