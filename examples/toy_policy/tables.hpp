// SPDX-License-Identifier: Apache-2.0
// The full tables of one mix, as Markdown that reads as text too: one row per variant, one row per
// pair, every target and budget. They go to summary.md, and to stdout with --tables.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"
#include "pairs.hpp"
#include "study.hpp"
#include "variants.hpp"

namespace toy {

std::string tables(const Options& options, const std::vector<Variant>& variants, const MixStudy& study,
                   const std::vector<PairResult>& pairs);

}  // namespace toy
