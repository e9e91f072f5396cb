// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: the packaging test checks that the error message says what an order needs.
#include <vector>

#include "leap/rank_advantage.hpp"

struct NotAnOrder {
  bool less(const leap::Outcome&, const leap::Outcome&) const { return false; }
};

int main() {
  const std::vector<leap::Outcome> group(4);
  return static_cast<int>(leap::rank_advantages(group, NotAnOrder{}).size());
}
