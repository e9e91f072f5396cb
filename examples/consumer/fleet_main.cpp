// SPDX-License-Identifier: Apache-2.0
// find_package(leap COMPONENTS fleet): a FleetClient for a Redis that is not there fails with a clear
// error, which proves the client and hiredis linked; with a Redis URL as its argument it connects.
#include <leap/sandbox/fleet_address.hpp>
#include <leap/sandbox/fleet_client.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  leap::sandbox::FleetClientOptions options;
  options.redis =
      leap::sandbox::parse_redis_url(argc > 1 ? argv[1] : "redis://127.0.0.1:1");  // port 1: nothing listens
  std::printf("fleet: requests on %s, stream %s\n", leap::sandbox::to_string(options.redis).c_str(),
              options.stream.c_str());
  try {
    leap::sandbox::FleetClient client(options);
    std::printf("fleet: connected\n");
  } catch (const std::runtime_error& e) {
    std::printf("fleet: %s\n", e.what());
    if (argc > 1) return 1;
  }
  return 0;
}
