// SPDX-License-Identifier: Apache-2.0
// The screen the program ends with: the claims and their answers in a few lines a person reads on a
// terminal (at most 30 lines of at most 100 characters for the README's first command and for
// --study), where the full tables and the plot are, and how long the run took. ASCII only, so that
// every character is one column wherever it is shown.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "claims.hpp"
#include "options.hpp"
#include "plot.hpp"

namespace toy {

// What the run left and what it cost, for the screen's last lines.
struct RunReport {
  std::vector<std::string> tables;  // summary.md per mix
  std::string json;                 // summary.json
  std::vector<Plot> plots;          // per mix
  std::size_t runs = 0;
  unsigned threads = 0;
  double seconds = 0.0;      // wall clock
  double cpu_seconds = 0.0;  // all threads together
};

// "0.77x [0.61, 1.03]", "0.69x 1/3" (one seed of three had a value), "-" (none).
std::string ratio_cell(const Stats& stats);
// "+0.003 [-0.016, +0.019]": a difference keeps its sign.
std::string difference_cell(const Stats& stats);

// The screen, one string per line, without newlines.
std::vector<std::string> screen_lines(const Options& options, const Claims& claims, const RunReport& report);

}  // namespace toy
