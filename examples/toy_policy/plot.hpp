// SPDX-License-Identifier: Apache-2.0
// The curves of one mix: a data file of Acc@1 and Acc@final against training evaluations (seed mean,
// min and max on a common grid) and, where gnuplot is installed, a PNG drawn from it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "options.hpp"
#include "study.hpp"
#include "variants.hpp"

namespace toy {

struct Plot {
  enum class Status { drawn, no_gnuplot, gnuplot_failed };
  std::filesystem::path data;  // always written
  std::filesystem::path png;   // set when drawn
  Status status = Status::no_gnuplot;
};

// Writes <out>/toy_policy[_hard].dat and, with gnuplot, .gp and .png beside it; prints nothing, so the
// caller decides where the news goes.
Plot write_plot(const Options& options, const std::vector<Variant>& variants, const MixStudy& study);

// One line for a person: where the plot is, or why there is none and where the data is.
std::string describe(const Plot& plot);

}  // namespace toy
