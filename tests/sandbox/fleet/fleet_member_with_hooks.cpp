// SPDX-License-Identifier: Apache-2.0
// leap-sandbox-fleet-test-member: `leap-sandbox fleet-member` built with the fleet tests' hook compiled
// in (LEAP_SANDBOX_FLEET_TEST_HOOKS: a request holding $LEAP_SANDBOX_FLEET_TEST_CRASH_MARKER kills the
// member, as a poison request would). The shipped leap-sandbox has no such hook; only the tests that need
// a request to kill its member start this program. Its command line is leap-sandbox's.
#include <exception>
#include <iostream>
#include <string>

#include "cli.hpp"

int main(int argc, char** argv) {
  leap_cli::Arguments args(argv + 1, argv + argc);
  if (args.empty() || args.front() != leap_cli::fleet_member_command.name) {
    std::cerr << "usage: leap-sandbox-fleet-test-member fleet-member [options of leap-sandbox fleet-member]\n";
    return 2;
  }
  args.erase(args.begin());
  try {
    return leap_cli::fleet_member_command.run(args);
  } catch (const std::exception& e) {
    std::cerr << "leap-sandbox-fleet-test-member: " << e.what() << "\n";
    return 2;
  }
}
