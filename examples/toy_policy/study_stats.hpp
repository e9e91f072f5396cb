// SPDX-License-Identifier: Apache-2.0
// The arithmetic of the toy study: one run's accuracy curve against training evaluations, values
// read off it by linear interpolation, the evaluations at which it first reaches a target, and
// mean / min / max over seeds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace toy {

// One held-out evaluation of the policy during training.
struct Point {
  int step = 0;
  std::int64_t evaluations = 0;   // training evaluations spent so far
  double modelled_seconds = 0.0;  // the wall-clock model's time for those evaluations
  double acc_turn1 = 0.0;         // Acc@1: first turn only
  double acc_final = 0.0;         // Acc@max_turns: with feedback
  double speedup = 0.0;           // geometric mean speedup of the correct kernels
};

enum class Metric { acc_turn1, acc_final };

inline double value_of(const Point& point, Metric metric) {
  return metric == Metric::acc_turn1 ? point.acc_turn1 : point.acc_final;
}

// The metric at `evaluations` on the piecewise-linear curve through the points; nullopt beyond the
// last point.
inline std::optional<double> value_at(const std::vector<Point>& curve, Metric metric, double evaluations) {
  if (curve.empty() || evaluations > static_cast<double>(curve.back().evaluations)) return std::nullopt;
  if (evaluations <= static_cast<double>(curve.front().evaluations)) return value_of(curve.front(), metric);
  for (std::size_t k = 1; k < curve.size(); ++k) {
    const double e0 = static_cast<double>(curve[k - 1].evaluations);
    const double e1 = static_cast<double>(curve[k].evaluations);
    if (evaluations <= e1) {
      const double t = e1 > e0 ? (evaluations - e0) / (e1 - e0) : 1.0;
      return value_of(curve[k - 1], metric) + t * (value_of(curve[k], metric) - value_of(curve[k - 1], metric));
    }
  }
  return value_of(curve.back(), metric);
}

// Where the curve first reaches `target`: the crossing interpolated linearly between the last point
// below and the first point at or above it. Evaluations and modelled seconds; nullopt if never.
struct Crossing {
  double evaluations = 0.0;
  double modelled_seconds = 0.0;
};

inline std::optional<Crossing> first_reaching(const std::vector<Point>& curve, Metric metric, double target) {
  for (std::size_t k = 0; k < curve.size(); ++k) {
    const double v1 = value_of(curve[k], metric);
    if (v1 < target) continue;
    if (k == 0) return Crossing{static_cast<double>(curve[0].evaluations), curve[0].modelled_seconds};
    const double v0 = value_of(curve[k - 1], metric);
    const double t = v1 > v0 ? (target - v0) / (v1 - v0) : 1.0;
    const auto lerp = [t](double a, double b) { return a + t * (b - a); };
    return Crossing{lerp(static_cast<double>(curve[k - 1].evaluations), static_cast<double>(curve[k].evaluations)),
                    lerp(curve[k - 1].modelled_seconds, curve[k].modelled_seconds)};
  }
  return std::nullopt;
}

// The area under the metric's curve over [0, budget] divided by budget: the mean accuracy over the
// evaluation budget (trapezoids on a grid of `cells` cells).
inline double mean_over_budget(const std::vector<Point>& curve, Metric metric, double budget, int cells = 200) {
  double area = 0.0;
  double previous = value_at(curve, metric, 0.0).value_or(0.0);
  for (int c = 1; c <= cells; ++c) {
    const double at = budget * c / cells;
    const double value = value_at(curve, metric, at).value_or(value_of(curve.back(), metric));
    area += 0.5 * (previous + value);
    previous = value;
  }
  return area / cells;
}

// Mean, min and max of the values present (a seed that never reached a target has none), and how
// many of `total` were present.
struct Stats {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  int present = 0;
  int total = 0;
  bool complete() const { return present == total && total > 0; }
};

inline Stats stats_of(const std::vector<std::optional<double>>& values) {
  Stats stats;
  stats.total = static_cast<int>(values.size());
  double sum = 0.0;
  for (const auto& value : values) {
    if (!value) continue;
    if (stats.present == 0) {
      stats.min = stats.max = *value;
    } else {
      stats.min = std::min(stats.min, *value);
      stats.max = std::max(stats.max, *value);
    }
    sum += *value;
    ++stats.present;
  }
  if (stats.present > 0) stats.mean = sum / stats.present;
  return stats;
}

inline Stats stats_of(const std::vector<double>& values) {
  std::vector<std::optional<double>> present(values.begin(), values.end());
  return stats_of(present);
}

}  // namespace toy
