// SPDX-License-Identifier: Apache-2.0
// The variants the toy study trains: GRPO baselines and LEAP's parts, named and described in the pairs
// whose rewards prefer the same things (see toy_policy.cpp for the list).
#pragma once

#include <string>
#include <vector>

#include <leap/leap.hpp>

#include "options.hpp"

namespace toy {

enum class Estimator { grpo, rank };
enum class GateKind { single_turn, all, dcp };

struct Variant {
  std::string name;
  std::string description;
  Estimator estimator = Estimator::rank;
  GateKind gate = GateKind::all;
  double reward_gamma = 1.0;  // GRPO: reward γ^(k-1) for a success at turn k
  leap::KernelOrder order{};  // rank
  std::string order_name;     // rank: "published", ...
};

// 0.5 -> "0.5", 1 -> "1.0", 0.95 -> "0.95": one decimal unless that would round.
std::string gamma_text(double gamma);

// Every variant of one study, in the tables' order.
std::vector<Variant> make_variants(const Options& options);

}  // namespace toy
