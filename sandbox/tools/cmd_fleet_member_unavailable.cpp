// SPDX-License-Identifier: Apache-2.0
// leap-sandbox fleet-member in a build without hiredis: says so and how to get it.
#include <iostream>

#include "cli.hpp"

namespace leap_cli {
namespace {

int run_fleet_member_unavailable(const Arguments&) {
  std::cerr << "leap-sandbox: this build has no fleet member: hiredis was not found when it was configured "
               "(apt-get install libhiredis-dev, then reconfigure and rebuild)\n";
  return 2;
}

}  // namespace

const Command fleet_member_command{"fleet-member", "fleet-member ...   (not in this build: needs hiredis)",
                                   "  A fleet member on Redis Streams; this build was configured without hiredis.\n",
                                   run_fleet_member_unavailable};

}  // namespace leap_cli
