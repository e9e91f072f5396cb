// SPDX-License-Identifier: Apache-2.0
// The JSON summary of one mix (summary.json, and stdout with --json): the options, every variant's
// per-seed statistics and every pair, as mean / min / max / seeds.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "options.hpp"
#include "pairs.hpp"
#include "study.hpp"
#include "variants.hpp"

namespace toy {

nlohmann::json study_json(const Options& options, const std::vector<Variant>& variants, const MixStudy& study,
                          const std::vector<PairResult>& pairs);

}  // namespace toy
