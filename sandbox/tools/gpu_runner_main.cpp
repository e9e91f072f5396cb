// SPDX-License-Identifier: Apache-2.0
// leap-sandbox-gpu-runner: the GPU runner as its own program. GpuRunner starts it with
// posix_spawn and speaks frames on descriptors 3 (requests) and 4 (replies); it is not meant to be run
// by hand. It dies with the process that started it, closes whatever else it inherited, and confines
// itself once the CUDA driver is up (see sandbox/src/evaluation/gpu_runner.hpp).
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "common/sanitizer_build.hpp"
#include "evaluation/gpu_runner.hpp"

// Under AddressSanitizer (the asan preset): LeakSanitizer's check at exit stops the world with a
// tracer that the confined runner cannot run, and then waits for it for ever, so a runner asked to
// exit never would. The runner's own memory is checked where it is not confined (the tests).
#ifdef LEAP_SANDBOX_UNDER_ASAN
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

namespace {

int usage(const char* problem) {
  std::fprintf(stderr,
               "leap-sandbox-gpu-runner: %s\n"
               "usage: leap-sandbox-gpu-runner --parent PID [--driver LIB] [--device N] [--fake] [--unconfined]\n"
               "       [--allow-pageable-host-access] [--local-memory-restart-bytes N]\n"
               "(started by leap-sandbox and the leap::sandbox library, with its pipes on descriptors 3 and 4)\n",
               problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  leap::sandbox::GpuRunnerConfig config;
  long parent = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--parent") {
      const char* v = value();
      char* end = nullptr;
      parent = v != nullptr ? std::strtol(v, &end, 10) : -1;
      if (v == nullptr || *end != '\0' || parent <= 0) return usage("--parent needs the starting process's id");
    } else if (a == "--driver") {
      const char* v = value();
      if (v == nullptr) return usage("--driver needs a library name or path");
      config.driver_library = v;
    } else if (a == "--device") {
      const char* v = value();
      if (v == nullptr) return usage("--device needs an ordinal");
      config.device = std::atoi(v);
    } else if (a == "--fake") {
      config.fake = true;
    } else if (a == "--unconfined") {
      config.confine = false;
    } else if (a == "--allow-pageable-host-access") {
      config.allow_pageable_host_access = true;
    } else if (a == "--local-memory-restart-bytes") {
      const char* v = value();
      char* end = nullptr;
      const unsigned long long n = v != nullptr ? std::strtoull(v, &end, 10) : 0;
      if (v == nullptr || *v < '0' || *v > '9' || *end != '\0')
        return usage("--local-memory-restart-bytes needs a byte count");
      config.local_memory_restart_bytes = static_cast<std::size_t>(n);
    } else {
      return usage(("unknown argument '" + std::string(a) + "'").c_str());
    }
  }
  if (parent <= 0) return usage("--parent is required");
  // Death with the parent, and the re-check for a parent that died before the prctl.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != static_cast<pid_t>(parent)) return 1;
  ::close_range(leap::sandbox::k_runner_reply_fd + 1, ~0u, 0);  // posix_spawn closed them too; belt and braces
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(SIGPIPE, SIG_DFL);
  return leap::sandbox::run_gpu_runner(leap::sandbox::k_runner_request_fd, leap::sandbox::k_runner_reply_fd, config);
}
