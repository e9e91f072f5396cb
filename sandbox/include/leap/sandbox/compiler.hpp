// SPDX-License-Identifier: Apache-2.0
// The compile service: NVRTC in confined, watchdogged processes (a one-shot child per compile, or a
// pool of long-lived pooled compilers that keep precompiled headers; or in-process for trusted source), behind
// the include jail and a cache.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_cache.hpp"
#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox {

enum class Isolation {
  // Each compile runs in a forked child confined by the OS (Landlock, seccomp, a private root, rlimits;
  // see docs/sandbox.md, "Confinement") before NVRTC sees the source, and killed past its CPU time limit:
  // the only mode for untrusted source. A few ms a compile.
  process,
  // Each compile runs in one of a few long-lived pooled compiler processes, each confined exactly as
  // a per-compile child before it reads any source, that keep NVRTC's automatic precompiled headers
  // between compiles: a kernel whose time goes into cuda_fp16.h, cub or mma.h compiles several times
  // faster from the second candidate that shares its headers on. Each compile is charged the pooled
  // compiler's CPU time from request to reply (queue time is not charged) and kills it past its limit;
  // a pooled compiler is replaced after a kill, a limit, a crash or
  // CompilePoolSettings::max_compiles_per_process compiles. What serve and the fleet member use.
  pooled,
  // The 0.1 name, when "worker" also meant the GPU runner and the fleet member. Removed in 0.3.
  worker_pool [[deprecated("use Isolation::pooled")]] = pooled,
  // NVRTC runs on the calling thread, unconfined: it reads any file the process can and echoes it in
  // its log. The limit is enforced by NVRTC's flow callback, which NVRTC (13.0) calls only between
  // phases, so a front-end bomb runs to the end of parsing. For trusted sources and measurements only.
  trusted_in_process,
};

// Which headers a candidate may include; the include jail enforces it before NVRTC sees the source.
struct IncludePolicy {
  std::vector<std::string> headers;   // exact names, e.g. "cuda_fp16.h"
  std::vector<std::string> prefixes;  // directories, e.g. "cuda/std/" allows "cuda/std/cstdint"
  // Directories whose files may all be included by their relative name: the allow-list follows the
  // toolkit (<cuda_runtime.h>, <curand_kernel.h>, <cub/...>, <mma.h>, ...) instead of a hand list.
  std::vector<std::string> roots;
  // Every header of the CUDA toolkit the sandbox compiles against (its include directory and the
  // cccl/ directory inside it; default_cuda_include_dir()). A Compiler adds the names of the NVRTC
  // compatibility headers (<cstdint>, <cuda_runtime.h>, ...) while that layer is on.
  static IncludePolicy cuda_defaults();
  // The same for a toolkit at `include_dir`.
  static IncludePolicy toolkit(const std::string& include_dir);
  static IncludePolicy none() { return {}; }  // shipped headers only
  bool allows(std::string_view name) const;   // also requires a clean relative name
};

// Resource limits of a confined compile child.
struct ConfinementLimits {
  std::uint64_t address_space_bytes = 4ull << 30;  // RLIMIT_AS; includes what the child inherits (NVRTC itself)
  unsigned max_open_files = 64;                    // RLIMIT_NOFILE
};

// What one compile may produce. A small source can make NVRTC write a module hundreds of thousands of
// times its size (`__device__ int table[1 << 24] = {1};`: 67 MB of CUBIN); past these limits
// the result is `resource_limit` with limit `output_size`, its log says which limit and by how much,
// and it is never cached. The compile process checks the sizes NVRTC reports before it copies the
// code out, so the module never reaches the caller's process; a result read from a cache that a
// Compiler with larger limits filled is held to this Compiler's. The defaults are far above any
// honest kernel (the built-in tasks and the test corpus stay under 1 MB of PTX, 230 KB of CUBIN and 2
// kernels each; docs/sandbox.md, "Output limits").
struct OutputLimits {
  std::uint64_t max_ptx_bytes = 16ull << 20;
  std::uint64_t max_cubin_bytes = 16ull << 20;
  std::uint64_t max_kernels = 1024;                    // entries in the CUBIN's symbol table
  std::uint64_t max_kernel_name_bytes = 256ull << 10;  // their names' total length (each is in every result)
};

// The pool of Isolation::pooled.
struct CompilePoolSettings {
  unsigned size =
      0;  // pooled compilers; 0 = CompilerConfig::parallel_compiles. Started on first use, one per compile in flight
  unsigned max_compiles_per_process = 256;  // then the process is replaced (bounds what NVRTC's heap may gather)
  bool pch = true;  // NVRTC's automatic precompiled headers, kept per set of in-memory headers and options
  // Each pooled compiler's private PCH directory (a tmpfs in its private root); one whose PCHs fill three
  // quarters of it is replaced after the compile. One PCH of cuda_fp16.h + cub is about 175 MB.
  std::uint64_t pch_scratch_bytes = 1ull << 30;
};

// What a Compiler's pool of pooled compilers has done so far.
struct CompilePoolStats {
  std::size_t processes_started = 0;
  std::size_t processes_replaced =
      0;  // retired after a kill, a limit, a crash, a full PCH directory or the compile count
  std::size_t compiles = 0;
  std::size_t pch_hits = 0;
  std::size_t pch_created = 0;
  std::vector<int> pids;  // the live pooled compilers
};

struct CompilerConfig {
  IncludePolicy includes = IncludePolicy::cuda_defaults();
  // The NVRTC compatibility layer (docs/sandbox.md, "Real kernels"): stand-ins for the standard and runtime headers
  // NVRTC lacks, so kernels written for nvcc compile as written. Off: those includes are refused,
  // each with what to use instead.
  bool compat_headers = true;
  Isolation isolation = Isolation::process;
  unsigned parallel_compiles =
      0;  // compile_batch's parallelism; 0 = hardware threads, capped at 8 (each compile can hold GBs)
  std::shared_ptr<CompileCache> cache;  // null = no caching; may be shared between compilers
  std::string cuda_include_dir;         // toolkit headers; empty = found next to libnvrtc, else the build's toolkit
  ConfinementLimits limits;             // rlimits of a compile child or pooled compiler
  OutputLimits output;                  // the largest PTX, CUBIN and kernel list a compile may produce
  CompilePoolSettings pool;             // Isolation::pooled
  // Process isolation without Landlock, seccomp and the private root (rlimits and process hygiene
  // stay); every result says so and is cached apart. Without it, a Compiler refuses to start where
  // the machine lacks Landlock or seccomp. For trusted source and measurements: an unconfined NVRTC
  // reads any host file a candidate names.
  bool unconfined = false;
  // Compile untrusted source although a confinement layer other than Landlock and seccomp is missing
  // here (today: the private root, where user namespaces are off). Without it such a Compiler refuses
  // to start, naming the layer and why; with it, every result names the missing layers
  // (CompileResult::missing_layers) and is cached apart. leap-sandbox --accept-weaker-confinement.
  bool accept_weaker_confinement = false;
  // A compile child or pooled compiler whose CPU time stands still this long before it answers
  // (deadlocked, stopped by a signal) is ended, with limit `idle`, instead of holding its caller until
  // the wall-clock backstop. A process waiting for a busy machine's CPU is not idle. 0 = no window.
  std::chrono::milliseconds idle_limit{5000};
  // Precompiled headers kept on disk in this directory and shared by every Compiler on the machine that
  // names it (the CLI's one-shot compiles, serve's and fleet members' pools): a candidate whose source
  // starts with `#include <...>` lines of toolkit headers compiles with the PCH of exactly those lines,
  // made once, from those lines alone, by a confined process that sees no candidate. Authenticated
  // and budgeted like the disk cache (see docs/sandbox.md, "Pooled compilers and precompiled headers").
  // nullopt = none. Isolation::process and pooled only.
  std::optional<std::filesystem::path> pch_directory;
  std::uint64_t pch_disk_bytes = 4ull << 30;  // the PCH files' budget; least recently used go first
  // Tests of the OS confinement only: every #include reaches NVRTC unscanned, so the tests show the
  // confinement holds on its own.
  bool skip_include_jail_for_tests = false;
};

// What a Compiler's stored precompiled headers (CompilerConfig::pch_directory) have done so far.
struct StoredPchStats {
  bool in_use = false;  // false: no directory, or this machine cannot keep PCHs across processes (`why`)
  std::string why;
  std::uintptr_t heap_address = 0;  // where NVRTC's PCH heap is placed in every compile process here
  std::size_t found = 0;            // compiles given a PCH from disk
  std::size_t created = 0;          // PCHs this Compiler made and stored
  std::size_t refused = 0;          // records that did not match their file (removed)
  std::size_t creation_failed = 0;
  std::size_t evictions = 0;
  // CPU time spent making PCHs, each charged to the compile that needed it (its cpu_seconds and its limit)
  double creation_cpu_seconds = 0;
};

struct BatchProgress {
  std::size_t done = 0;  // results finished so far, this one included
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
  // Results in job order; `parallel_compiles` compiles at a time. Options of every job are validated first.
  std::vector<CompileResult> compile_batch(std::span<const CompileJob> jobs, const ProgressCallback& progress = {});

  const CompilerConfig& config() const noexcept;
  CompileCache* cache() const noexcept;
  CompilePoolStats pool_stats() const;  // all zero unless Isolation::pooled
  StoredPchStats stored_pch_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

NvrtcVersion nvrtc_version();
std::vector<int> supported_archs();      // e.g. {75, 80, ..., 121}
unsigned cupti_api_version();            // cuptiGetVersion; 0 when CUPTI cannot say
std::string default_cuda_include_dir();  // what an empty CompilerConfig::cuda_include_dir resolves to
std::string toolchain_versions();        // "leap X.Y.Z, NVRTC A.B, CUPTI API N", for --version and info
std::uint64_t nvrtc_pch_heap_bytes();    // NVRTC's PCH heap (nvrtcGetPCHHeapSize), per pooled compiler; 0 when unknown

}  // namespace leap::sandbox
