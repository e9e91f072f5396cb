// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <limits>
#include <vector>

#include "leap/turn_credit.hpp"

using Catch::Matchers::Contains;

TEST_CASE("a positive advantage is discounted back from the solving turn", "[turns]") {
  CHECK(leap::turn_advantages(0.8, 3, 3, 0.5) == std::vector<double>{0.2, 0.4, 0.8});
  CHECK(leap::turn_advantages(0.8, 1, 1, 0.5) == std::vector<double>{0.8});
  CHECK(leap::turn_advantages(0.6, 2, 2, 1.0) == std::vector<double>{0.6, 0.6});
  CHECK(leap::turn_advantages(0.6, 2, 2, 0.0) == std::vector<double>{0.0, 0.6});
}

TEST_CASE("turns after the solving turn get nothing", "[turns]") {
  CHECK(leap::turn_advantages(1.0, 3, 1, 0.9) == std::vector<double>{1.0, 0.0, 0.0});
}

TEST_CASE("a non-positive advantage applies to every turn", "[turns]") {
  CHECK(leap::turn_advantages(-0.5, 3, 0, 0.5) == std::vector<double>{-0.5, -0.5, -0.5});
  CHECK(leap::turn_advantages(-0.25, 2, 2, 0.5) == std::vector<double>{-0.25, -0.25});  // solved, but ranked low
  CHECK(leap::turn_advantages(0.0, 2, 1, 0.5) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("a positive advantage without a solving turn applies to every turn", "[turns]") {
  CHECK(leap::turn_advantages(0.5, 2, 0, 0.5) == std::vector<double>{0.5, 0.5});
}

TEST_CASE("no turns: an empty result", "[turns]") { CHECK(leap::turn_advantages(0.5, 0, 0, 0.5).empty()); }

TEST_CASE("bad arguments are named with their values", "[turns][errors]") {
  CHECK_THROWS_WITH(leap::turn_advantages(0.5, 2, 3, 0.5), Contains("solved_turn (3) > num_turns (2)"));
  CHECK_THROWS_WITH(leap::turn_advantages(0.5, -1, 0, 0.5), Contains("num_turns (-1) is negative"));
  CHECK_THROWS_WITH(leap::turn_advantages(0.5, 2, -1, 0.5), Contains("solved_turn (-1) is negative"));
  CHECK_THROWS_WITH(leap::turn_advantages(0.5, 2, 1, 1.5), Contains("gamma (1.5) is outside [0, 1]"));
  CHECK_THROWS_WITH(leap::turn_advantages(0.5, 2, 1, std::numeric_limits<double>::quiet_NaN()), Contains("gamma"));
  CHECK_THROWS_AS(leap::turn_advantages(std::numeric_limits<double>::infinity(), 2, 1, 0.5), std::invalid_argument);
}
