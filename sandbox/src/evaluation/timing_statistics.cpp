// SPDX-License-Identifier: Apache-2.0
#include "evaluation/timing_statistics.hpp"

#include <algorithm>
#include <cstddef>

namespace leap::sandbox::detail {

TimingStatistics timing_statistics(std::vector<double> runs_ms) {
  TimingStatistics s;
  std::vector<double>& v = runs_ms;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    const double pos = f * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = q(0.5);
  s.p25 = q(0.25);
  s.p75 = q(0.75);
  s.min = v.front();
  s.spread = s.median > 0 ? (s.p75 - s.p25) / s.median : NAN;
  return s;
}

}  // namespace leap::sandbox::detail
