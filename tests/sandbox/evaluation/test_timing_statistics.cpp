// SPDX-License-Identifier: Apache-2.0
// The harness's summary of timed runs: quartiles by linear interpolation, the fastest run, and the
// spread that decides when timing may stop.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "evaluation/timing_statistics.hpp"

namespace dt = leap::sandbox::detail;

TEST_CASE("timing statistics: no runs give NaN everywhere", "[sandbox][timing_statistics]") {
  const dt::TimingStatistics s = dt::timing_statistics({});
  CHECK(std::isnan(s.median));
  CHECK(std::isnan(s.p25));
  CHECK(std::isnan(s.p75));
  CHECK(std::isnan(s.min));
  CHECK(std::isnan(s.spread));
}

TEST_CASE("timing statistics: one run is every figure, with no spread", "[sandbox][timing_statistics]") {
  const dt::TimingStatistics s = dt::timing_statistics({2.5});
  CHECK(s.median == 2.5);
  CHECK(s.p25 == 2.5);
  CHECK(s.p75 == 2.5);
  CHECK(s.min == 2.5);
  CHECK(s.spread == 0.0);
}

TEST_CASE("timing statistics: quartiles interpolate between the sorted runs, in any order",
          "[sandbox][timing_statistics]") {
  // Sorted: 1 2 3 4. Positions 0.75, 1.5, 2.25 of 0..3.
  const dt::TimingStatistics s = dt::timing_statistics({4.0, 1.0, 3.0, 2.0});
  CHECK(s.min == 1.0);
  CHECK(s.p25 == Approx(1.75));
  CHECK(s.median == Approx(2.5));
  CHECK(s.p75 == Approx(3.25));
  CHECK(s.spread == Approx(1.5 / 2.5));
  // An odd count: the median is the middle run.
  const dt::TimingStatistics odd = dt::timing_statistics({5.0, 1.0, 3.0});
  CHECK(odd.median == 3.0);
  CHECK(odd.p25 == 2.0);
  CHECK(odd.p75 == 4.0);
}

TEST_CASE("timing statistics: one far outlier barely moves the median and the spread", "[sandbox][timing_statistics]") {
  std::vector<double> runs(9, 1.0);
  runs.push_back(1000.0);  // a preempted run
  const dt::TimingStatistics s = dt::timing_statistics(runs);
  CHECK(s.median == 1.0);
  CHECK(s.min == 1.0);
  CHECK(s.p75 == 1.0);  // position 6.75 of 0..9: still among the ordinary runs
  CHECK(s.spread == 0.0);
}

TEST_CASE("timing statistics: a median of zero has no spread to speak of", "[sandbox][timing_statistics]") {
  const dt::TimingStatistics s = dt::timing_statistics({0.0, 0.0, 0.0});
  CHECK(s.median == 0.0);
  CHECK(std::isnan(s.spread));
}
