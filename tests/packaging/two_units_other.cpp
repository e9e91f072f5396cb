// SPDX-License-Identifier: Apache-2.0
#include "leap/leap.hpp"

double ranked_in_other_unit() {
  const std::vector<leap::Outcome> group = {{1, leap::Verdict::correct, 1.0, 1}, {}};
  return leap::rank_advantages(group)[1];
}
