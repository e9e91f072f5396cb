// SPDX-License-Identifier: Apache-2.0
// For the tests of the scans of candidate text: whether a scan of a large adversarial input finishes
// within a CPU-time bound, enforced by the kernel (RLIMIT_CPU) on a forked child. The bound is chosen
// far above what a pass linear in the input needs, even under a sanitizer, and far below what a
// quadratic one would (minutes to hours at these sizes), so the test tells the two apart without
// timing anything, and a quadratic scan fails it at the bound instead of running for an hour.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace leap_test {

// Runs body() in a forked child limited to `seconds` of CPU time; true when it returned true within
// them (false when it returned false, threw, or was stopped at the bound).
template <class Body>
bool finishes_within_cpu_seconds(unsigned seconds, Body body) {
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const rlimit cpu{seconds, seconds + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    bool ok = false;
    try {
      ok = body();
    } catch (...) {}
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace leap_test
