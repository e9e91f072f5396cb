// SPDX-License-Identifier: Apache-2.0
// The compile service: NVRTC in a confined, watchdogged child (or in-process for trusted source),
// behind the include jail and a cache.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "leap/sandbox/compile_cache.hpp"
#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/confinement.hpp"
#include "leap/sandbox/include_jail.hpp"

namespace leap::sandbox {

enum class Isolation {
  // Each compile runs in a forked child confined by the OS (Landlock, seccomp, a private root, rlimits;
  // see confinement.hpp) before NVRTC sees the source, and killed past its CPU time limit: the only
  // mode for untrusted source. A few ms a compile.
  process,
  // NVRTC runs on the calling thread, unconfined: it reads any file the process can and echoes it in
  // its log. The limit is enforced by NVRTC's flow callback, which NVRTC (13.0) calls only between
  // phases, so a front-end bomb runs to the end of parsing. For trusted sources and measurements only.
  trusted_in_process,
};

struct CompilerConfig {
  IncludePolicy includes = IncludePolicy::cuda_defaults();
  // The NVRTC compatibility layer (compat_headers.hpp): stand-ins for the standard and runtime headers
  // NVRTC lacks, so kernels written for nvcc compile as written. Off: those includes are refused,
  // each with what to use instead.
  bool compat_headers = true;
  Isolation isolation = Isolation::process;
  unsigned workers = 0;  // batch parallelism; 0 = hardware threads, capped at 8 (each compile can hold GBs)
  std::shared_ptr<CompileCache> cache;  // null = no caching; may be shared between compilers
  std::string cuda_include_dir;  // toolkit headers; empty = found next to libnvrtc, else the build's toolkit
  ConfinementLimits limits;      // rlimits of a compile child
  // Process isolation without Landlock, seccomp and the private root (rlimits and process hygiene
  // stay); every result says so and is cached apart. Without it, a Compiler refuses to start where
  // the machine lacks Landlock or seccomp. For trusted source and measurements: an unconfined NVRTC
  // reads any host file a candidate names.
  bool unconfined = false;
  // Tests of the OS confinement only: every #include reaches NVRTC unscanned, so the tests show the
  // confinement holds on its own.
  bool skip_include_jail_for_tests = false;
};

struct BatchProgress {
  std::size_t done = 0;   // results finished so far, this one included
  std::size_t total = 0;
  std::size_t index = 0;  // which job just finished
  const CompileResult* result = nullptr;
};
using ProgressCallback = std::function<void(const BatchProgress&)>;  // called on one thread at a time

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
};

class Compiler {
 public:
  explicit Compiler(CompilerConfig config = {});  // throws std::runtime_error if the toolkit is unusable
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  // Throws std::invalid_argument for bad options (naming option and value); everything the source
  // does is reported in the result.
  CompileResult compile(const CompileJob& job);
  // Results in job order; `workers` compiles at a time. Options of every job are validated first.
  std::vector<CompileResult> compile_batch(std::span<const CompileJob> jobs, const ProgressCallback& progress = {});

  const CompilerConfig& config() const noexcept;
  CompileCache* cache() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

NvrtcVersion nvrtc_version();
std::vector<int> supported_archs();  // e.g. {75, 80, ..., 121}
unsigned cupti_api_version();         // cuptiGetVersion; 0 when CUPTI cannot say
std::string default_cuda_include_dir();  // what an empty CompilerConfig::cuda_include_dir resolves to
std::string toolchain_versions();        // "leap X.Y.Z, NVRTC A.B, CUPTI API N", for --version and info

}  // namespace leap::sandbox
