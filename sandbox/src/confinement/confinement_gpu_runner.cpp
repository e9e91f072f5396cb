// SPDX-License-Identifier: Apache-2.0
// The GPU runner's confinement, applied once the CUDA driver is initialised: from then on it
// may read the libraries it has mapped (the driver loads more of its own lazily) and use the GPU's
// device nodes; nothing else on the host is readable, nothing is writable, nothing executes.
#include <dirent.h>
#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "confinement/confinement.hpp"

namespace leap::sandbox::detail {
namespace {

// Directories of every file mapped into this process (/proc/self/maps).
std::set<std::string> mapped_directories() {
  std::set<std::string> dirs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (const std::size_t deleted = path.find(" (deleted)"); deleted != std::string::npos) path.resize(deleted);
    if (path.starts_with("/dev/") || path.starts_with("/memfd:")) continue;
    if (const std::size_t last = path.rfind('/'); last != std::string::npos && last > 0)
      dirs.insert(path.substr(0, last));
  }
  return dirs;
}

GpuRunnerConfinement& applied() {
  static GpuRunnerConfinement c;
  return c;
}

}  // namespace

const GpuRunnerConfinement& gpu_runner_confinement() { return applied(); }

GpuRunnerConfinement confine_gpu_runner() {
  GpuRunnerConfinement& c = applied();
  c = {};
  LandlockPlan plan;
  for (const std::string& dir : mapped_directories()) plan.rules.push_back({dir, false});
  // The loader's cache, for libraries the driver opens by name later (the PTX JIT compiler); /proc and
  // /sys as far as the driver reads them (PCI and NUMA topology live under /sys/devices).
  for (const char* path :
       {"/etc/ld.so.cache", "/proc/self", "/proc/driver/nvidia", "/sys/devices", "/sys/bus/pci/devices"}) {
    plan.rules.push_back({path, false});
  }
  if (DIR* dev = ::opendir("/dev")) {
    while (const dirent* e = ::readdir(dev)) {
      if (std::strncmp(e->d_name, "nvidia", 6) == 0) plan.rules.push_back({std::string("/dev/") + e->d_name, true});
    }
    ::closedir(dev);
  }
  if (DIR* caps = ::opendir("/dev/nvidia-caps")) {
    ::closedir(caps);
    plan.rules.push_back({"/dev/nvidia-caps", true});
  }
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  c.landlock_abi = landlock_abi();
  if (c.landlock_abi > 0) {
    if (const int e = apply_landlock(plan, c.landlock_abi); e != 0) {
      c.error = std::string("landlock: ") + std::strerror(e);
      c.landlock_abi = 0;
      return c;
    }
  }
  std::string reason;
  if (seccomp_available(reason)) {
    if (const int e = apply_seccomp(gpu_runner_filter()); e != 0) {
      c.error = std::string("seccomp: ") + std::strerror(e);
      return c;
    }
    c.seccomp = true;
  }
  return c;
}

}  // namespace leap::sandbox::detail
