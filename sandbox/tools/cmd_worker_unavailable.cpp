// SPDX-License-Identifier: Apache-2.0
// leap-sandbox worker in a build without hiredis: says so and how to get it.
#include <iostream>

#include "cli.hpp"

namespace leap_cli {
namespace {

int run_worker_unavailable(const Arguments&) {
  std::cerr << "leap-sandbox: this build has no fleet worker: hiredis was not found when it was configured "
               "(apt-get install libhiredis-dev, then reconfigure and rebuild)\n";
  return 2;
}

}  // namespace

const Command worker_command{"worker", "worker ...   (not in this build: needs hiredis)",
                             "  A fleet worker on Redis Streams; this build was configured without hiredis.\n",
                             run_worker_unavailable};

}  // namespace leap_cli
