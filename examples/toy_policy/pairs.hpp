// SPDX-License-Identifier: Apache-2.0
// Paired comparisons: two variants compared seed by seed (a / b for evaluations, time and speedup;
// a - b for final accuracy), then reduced to mean / min / max over the seeds where both have a value.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "options.hpp"
#include "study.hpp"
#include "variants.hpp"

namespace toy {

struct Pair {
  std::string a, b, what;
};

// The pairs whose rewards prefer the same things, and the ablation's: which variant against which, and why.
std::vector<Pair> make_pairs(const Options& options, const std::vector<Variant>& variants);

// The variant named `name`, or variants.size().
std::size_t index_of(const std::vector<Variant>& variants, const std::string& name);

struct PairResult {
  Pair pair;
  std::array<std::array<Stats, 3>, 2> evaluation_ratio;  // [metric][target]
  Stats hours_ratio;                                     // to the 95 % Acc@final target
  Stats evaluations_ratio_total;                         // evaluations per step
  std::array<Stats, 2> final_difference;                 // [metric]
  Stats speedup_ratio;
};

// Pairs naming a variant that is not in `variants` are left out.
std::vector<PairResult> compare_pairs(const std::vector<Pair>& pairs, const std::vector<Variant>& variants,
                                      const MixStudy& study);

}  // namespace toy
