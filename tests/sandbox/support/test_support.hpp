// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the sandbox tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace leap_test {

// A fresh directory under the system temp dir, removed with its contents at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("leap-sandbox-test-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(counter++) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const std::filesystem::path p = path / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline const char* plain_kernel() {
  return "extern \"C\" __global__ void scale(float* x, float a, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) x[i] *= a;\n"
         "}\n";
}

}  // namespace leap_test

#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"
#include <leap/sandbox/driver_probe.hpp>
#include <leap/sandbox/evaluator.hpp>

namespace leap_test {
// Built member by member: GCC 12 -Wextra warns on designated initialisers that omit members.
inline leap::sandbox::CompilerConfig config(leap::sandbox::Isolation iso, unsigned parallel_compiles = 0,
                                            std::shared_ptr<leap::sandbox::CompileCache> cache = {}) {
  leap::sandbox::CompilerConfig c;
  c.isolation = iso;
  c.parallel_compiles = parallel_compiles;
  c.cache = std::move(cache);
  return c;
}
// Trusted test source compiled once, in process, for `arch` (an sm_ arch keeps the CUBIN).
inline leap::sandbox::CompileResult compile_trusted(const std::string& source, const std::string& arch) {
  leap::sandbox::Compiler c(config(leap::sandbox::Isolation::trusted_in_process, 1));
  leap::sandbox::CompileJob j;
  j.source = source;
  j.options.arch = arch;
  return c.compile(j);
}
inline leap::sandbox::CacheOptions cache_options(std::size_t memory_bytes, std::filesystem::path dir = {}) {
  leap::sandbox::CacheOptions o;
  o.memory_bytes = memory_bytes;
  if (!dir.empty()) o.directory = std::move(dir);
  return o;
}
// An evaluator that knows there is no GPU (no driver probe) and draws trials from seed 1.
inline leap::sandbox::EvaluatorConfig no_gpu_config() {
  leap::sandbox::EvaluatorConfig c;
  c.gpu = leap::sandbox::GpuStatus{leap::sandbox::GpuState::no_driver, 0, {}, "cannot load libcuda.so.1"};
  c.seed = 1;
  return c;
}
// Runs problems(k) for k in [0, count) in forked children at once; each child exits with the number
// of problems its body counted (100 if it threw). Checks that every child exited 0.
template <class Body>
void check_in_children(int count, Body problems) {
  std::vector<pid_t> kids;
  for (int k = 0; k < count; ++k) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int bad = 100;
      try {
        bad = problems(k);
      } catch (...) {}
      _exit(bad);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}
// Untrusted compiles refuse to run without every confinement layer; a test that needs them says so.
inline void require_confinement() {
  const leap::sandbox::ConfinementSupport& s = leap::sandbox::confinement_support();
  INFO("this machine lacks a confinement layer, and untrusted compiles refuse to run without it: " << s.missing());
  REQUIRE(s.full());
}
// Three threads that allocate and free without pause until destroyed: a caller whose other threads
// may hold an allocator lock at the moment something forks.
class AllocationChurn {
 public:
  AllocationChurn() {
    for (int t = 0; t < 3; ++t) {
      threads_.emplace_back([this] {
        std::vector<std::unique_ptr<std::string>> held(64);
        for (std::size_t i = 0; !stop_.load(std::memory_order_relaxed); ++i) {
          held[i % held.size()] = std::make_unique<std::string>(16 + i % 4096, 'x');
        }
      });
    }
  }
  ~AllocationChurn() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  AllocationChurn(const AllocationChurn&) = delete;
  AllocationChurn& operator=(const AllocationChurn&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};
// A process's parent as /proc/PID/stat says; -1 when it is gone.
inline long parent_of(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  char state = 0;
  long ppid = -1;
  rest >> state >> ppid;
  return ppid;
}
inline long parent_of(pid_t pid) { return parent_of(std::to_string(pid)); }
// How many threads a process has, per /proc.
inline std::size_t threads_of(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}
inline leap::sandbox::ProbeOptions probe_library(std::string lib) {
  leap::sandbox::ProbeOptions o;
  o.library = std::move(lib);
  return o;
}
}  // namespace leap_test
