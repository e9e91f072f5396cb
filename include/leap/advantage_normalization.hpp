// SPDX-License-Identifier: Apache-2.0
// Optional rescaling of a batch of advantages, for trainers whose learning rate was tuned on
// advantages of another scale (most GRPO setups divide by the group's standard deviation).
//
//   none       the advantages as they are (the default everywhere in leap)
//   group_std  each group's advantages divided by (their unbiased std + epsilon), as GRPO scales
//              rewards; a group of one, or one whose advantages are all equal, keeps them (0 for
//              rank advantages). Rank advantages with turn_weight = 0 on binary outcomes are
//              G / (G - 1) * (r - mean): with epsilon = 0 this gives exactly GRPO's z-score.
//   batch_rms  every advantage divided by (the batch's root mean square + epsilon), so the batch has
//              RMS 1 whatever the estimator; an all-zero batch stays 0.
// Only scales, never shifts: signs, zero sums and ties are kept. Sums are taken in double.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "leap/advantage_workspace.hpp"
#include "leap/detail/error.hpp"
#include "leap/detail/group_index.hpp"

namespace leap {

enum class AdvantageNormalization : std::uint8_t { none, group_std, batch_rms };

constexpr std::string_view to_string(AdvantageNormalization normalization) noexcept {
  switch (normalization) {
    case AdvantageNormalization::none: return "none";
    case AdvantageNormalization::group_std: return "group_std";
    case AdvantageNormalization::batch_rms: return "batch_rms";
  }
  return "unknown";
}

namespace detail {

template <class Real>
void normalize(std::span<Real> advantages, std::span<const std::uint32_t> group_ids,
               AdvantageNormalization normalization, double epsilon, AdvantageWorkspace& workspace) {
  constexpr const char* function = "normalize_advantages";
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
    throw_invalid_argument("leap::", function, ": epsilon (", epsilon, ") must be finite and >= 0");
  }
  for (std::size_t i = 0; i < advantages.size(); ++i) {
    if (!std::isfinite(advantages[i])) {
      throw_invalid_argument("leap::", function, ": advantages[", i, "] (", advantages[i], ") is not finite");
    }
  }
  switch (normalization) {
    case AdvantageNormalization::none: return;
    case AdvantageNormalization::batch_rms: {
      if (advantages.empty()) return;
      double squares = 0.0;
      for (Real a : advantages) squares += static_cast<double>(a) * static_cast<double>(a);
      // Divided, not multiplied by a reciprocal: a / scale is the correctly rounded quotient users
      // compare with (3 / 2.5 == 1.2, while 3 * (1 / 2.5) is not).
      const double scale = std::sqrt(squares / static_cast<double>(advantages.size())) + epsilon;
      if (!(scale > 0.0)) return;  // a zero scale only happens when every value is 0
      for (Real& a : advantages) a = static_cast<Real>(static_cast<double>(a) / scale);
      return;
    }
    case AdvantageNormalization::group_std: {
      require_same_size(function, "group_ids", group_ids.size(), "advantages", advantages.size());
      WorkspaceAccess access(workspace, function);
      for_each_group(
          group_ids, std::span<const Real>(advantages.data(), advantages.size()), advantages, access.batch(),
          [&](std::span<const Real> group, std::span<Real> group_out) {
            // group and group_out may be one span (adjacent members) or a gathered copy and a
            // fresh buffer (scattered members): write every member either way.
            const std::size_t n = group.size();
            double scale = 1.0;
            if (n >= 2) {
              double sum = 0.0;
              for (Real a : group) sum += static_cast<double>(a);
              const double mean = sum / static_cast<double>(n);
              double squares = 0.0;
              for (Real a : group) squares += (static_cast<double>(a) - mean) * (static_cast<double>(a) - mean);
              const double std_dev = std::sqrt(squares / static_cast<double>(n - 1));
              if (std_dev > 0.0) scale = 1.0 / (std_dev + epsilon);  // all equal: kept as they are
            }
            for (std::size_t i = 0; i < n; ++i) group_out[i] = static_cast<Real>(static_cast<double>(group[i]) * scale);
          },
          /*in_place=*/true);
      return;
    }
  }
  throw_invalid_argument("leap::", function, ": unknown normalization (", static_cast<int>(normalization), ")");
}

}  // namespace detail

// Rescales advantages in place. group_ids (one per advantage, as for rank_advantages) is needed by
// group_std only and may be empty otherwise. Throws std::invalid_argument, before writing anything,
// for a non-finite advantage, a negative or non-finite epsilon, or (group_std) mismatched lengths.
inline void normalize_advantages(std::span<double> advantages, std::span<const std::uint32_t> group_ids,
                                 AdvantageNormalization normalization, double epsilon = 1e-6) {
  detail::with_thread_workspace(
      [&](AdvantageWorkspace& ws) { detail::normalize<double>(advantages, group_ids, normalization, epsilon, ws); });
}
inline void normalize_advantages(std::span<float> advantages, std::span<const std::uint32_t> group_ids,
                                 AdvantageNormalization normalization, double epsilon = 1e-6) {
  detail::with_thread_workspace(
      [&](AdvantageWorkspace& ws) { detail::normalize<float>(advantages, group_ids, normalization, epsilon, ws); });
}

// Both in a workspace the caller keeps (one per thread).
inline void normalize_advantages(std::span<double> advantages, std::span<const std::uint32_t> group_ids,
                                 AdvantageNormalization normalization, double epsilon, AdvantageWorkspace& workspace) {
  detail::normalize<double>(advantages, group_ids, normalization, epsilon, workspace);
}
inline void normalize_advantages(std::span<float> advantages, std::span<const std::uint32_t> group_ids,
                                 AdvantageNormalization normalization, double epsilon, AdvantageWorkspace& workspace) {
  detail::normalize<float>(advantages, group_ids, normalization, epsilon, workspace);
}

}  // namespace leap
