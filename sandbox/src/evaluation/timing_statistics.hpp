// SPDX-License-Identifier: Apache-2.0
// The summary of one side's timed runs: median, quartiles, fastest run and spread. The harness
// reports these for the candidate and the reference and stops timing once both spreads are small.
// Internal; a pure function, tested directly.
#pragma once

#include <cmath>
#include <vector>

namespace leap::sandbox::detail {

struct TimingStatistics {
  double median = NAN, p25 = NAN, p75 = NAN, min = NAN;
  // The interquartile range relative to the median, (p75 - p25) / median: a few slow outliers (a
  // clock step, a preempted run) move it little, unlike a standard deviation. NaN when the median is
  // not positive.
  double spread = NAN;
};

// Quartiles interpolate linearly between the sorted runs (a run count of 1 gives that run for every
// figure); no runs give NaN everywhere.
TimingStatistics timing_statistics(std::vector<double> runs_ms);

}  // namespace leap::sandbox::detail
