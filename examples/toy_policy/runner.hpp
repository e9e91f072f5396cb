// SPDX-License-Identifier: Apache-2.0
// One run of the toy study: a variant trained at one learning rate on one seed's tasks, with its
// held-out accuracy curve and the step metrics the tables report.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <leap/leap.hpp>

#include "options.hpp"
#include "simulated_kernel_env.hpp"
#include "study_stats.hpp"
#include "variants.hpp"

namespace toy {

struct RunResult {
  std::vector<Point> curve;
  int steps = 0;
  std::int64_t evaluations = 0;
  std::int64_t solved_later = 0;
  std::int64_t solved_later_negative = 0;
  double advantage_rms_sum = 0.0;  // over steps
  int groups = 0;
  std::array<int, leap::gate_reason_count> groups_by_reason{};
};

// Trains `variant` from a fresh policy until `options.budget` training evaluations are spent. Pure:
// the same arguments give the same result on any thread.
RunResult run_one(const Options& options, const std::vector<Task>& tasks, std::uint64_t seed, const Variant& variant,
                  double learning_rate);

}  // namespace toy
