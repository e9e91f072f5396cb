// SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include "leap/leap.hpp"

double ranked_in_other_unit();

int main() {
  const std::vector<leap::Outcome> group = {{1, leap::Verdict::correct, 1.0, 1}, {}};
  const double here = leap::rank_advantages(group)[0];
  const double there = ranked_in_other_unit();
  std::printf("this unit %g, other unit %g\n", here, there);
  return here == 1.0 && there == -1.0 ? 0 : 1;
}
