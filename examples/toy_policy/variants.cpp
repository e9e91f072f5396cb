// SPDX-License-Identifier: Apache-2.0
#include "variants.hpp"

#include <cstdio>

namespace toy {

std::string gamma_text(double gamma) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", gamma);
  if (std::stod(text) != gamma) std::snprintf(text, sizeof text, "%g", gamma);
  return text;
}

std::vector<Variant> make_variants(const Options& options) {
  std::vector<Variant> variants;
  variants.push_back(
      {"single_turn", "GRPO, binary reward, one turn", Estimator::grpo, GateKind::single_turn, 1.0, {}, ""});
  for (double gamma : options.reward_gammas) {
    variants.push_back({"multi_turn_g" + gamma_text(gamma),
                        "GRPO, reward " + gamma_text(gamma) + "^(k-1), all groups expanded",
                        Estimator::grpo,
                        GateKind::all,
                        gamma,
                        {},
                        ""});
  }
  leap::KernelOrder binary;
  binary.turn_weight = 0.0;
  variants.push_back({"rank_binary", "rank, successes tie (turn_weight 0), all groups expanded", Estimator::rank,
                      GateKind::all, 1.0, binary, "turn_weight 0"});
  variants.push_back({"leap_unpruned", "rank, published order, all groups expanded", Estimator::rank, GateKind::all,
                      1.0, leap::KernelOrder{}, "published"});
  variants.push_back({"grpo_dcp_g" + gamma_text(options.ablation_gamma),
                      "GRPO, reward " + gamma_text(options.ablation_gamma) + "^(k-1), DCP gate",
                      Estimator::grpo,
                      GateKind::dcp,
                      options.ablation_gamma,
                      {},
                      ""});
  variants.push_back({"leap", "LEAP as published: rank, published order, DCP gate", Estimator::rank, GateKind::dcp, 1.0,
                      leap::KernelOrder{}, "published"});
  char speed_name[64];
  std::snprintf(speed_name, sizeof speed_name, "published + speedup within %g %%", 100 * options.speed_tolerance);
  variants.push_back({"leap_speed", std::string("speed-aware LEAP: ") + speed_name + ", DCP gate", Estimator::rank,
                      GateKind::dcp, 1.0, leap::KernelOrder::with_speedup(options.speed_tolerance), speed_name});
  return variants;
}

}  // namespace toy
