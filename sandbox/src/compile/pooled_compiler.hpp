// SPDX-License-Identifier: Apache-2.0
// One long-lived pooled compiler: a child process confined once (the same Landlock, seccomp, private
// root and rlimits as a one-shot compile child, applied before it reads any source) that then serves
// compiles over a socket, keeping NVRTC's automatic precompiled headers in a scratch directory of its
// own. The parent charges each compile the process's CPU time from the request to the reply and kills
// the process past the compile's limit. The process is forked by the Compiler's compile launcher
// (compile_launcher.hpp), never by the thread that asks for it: that thread's process may have other
// threads holding locks at that moment, which a fork would leave locked for ever in the process.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "compile/compile_child.hpp"
#include "compile/compile_launcher.hpp"
#include "compile/nvrtc_compile.hpp"

namespace leap::sandbox::detail {

struct PooledCompilerSettings {
  bool pch = true;
  std::uint64_t scratch_bytes = 1ull << 30;  // the PCH directory's size (a PCH of cub is ~175 MB)
  // NVRTC's PCH heap, reserved once a compile asks for a PCH: the sandbox's own, so it is added to the
  // address-space limit rather than taken from the candidate's share.
  std::uint64_t pch_heap_bytes = 0;
  // A host directory to use as the scratch directory instead of a private one (bound read-write into
  // the private root): where a process that creates a stored PCH writes it. Not removed by the process.
  std::string scratch_source;
};

class PooledCompiler {
 public:
  // Has `launcher` (made over the same `setup`) fork the process, and waits until it is confined. Throws
  // std::runtime_error when it cannot start or confine itself (a broken environment, as for a compile
  // child).
  PooledCompiler(CompileLauncher& launcher, const ChildSetup& setup, const PooledCompilerSettings& settings);
  ~PooledCompiler();  // kills the process and its process group, reaps it, removes its scratch directory
  PooledCompiler(const PooledCompiler&) = delete;
  PooledCompiler& operator=(const PooledCompiler&) = delete;

  struct Outcome {
    CompileResult result;  // status, limit and cpu_seconds as the parent saw them
    bool alive = true;     // false: the process was killed or died; it must be replaced
    // The process ended without an answer while its launcher was lost (gone, stopped, deadlocked: see
    // compile_launcher.hpp): how it ended is not known, so `result` is no verdict on the candidate and
    // the compile is to be done again on a fresh process.
    bool launcher_lost = false;
    std::uint64_t scratch_used = 0;  // bytes in its PCH directory after the compile
  };
  // `request.pch_dir` is a key (pch_key) or empty; the process places it in its scratch directory.
  Outcome compile(const NvrtcRequest& request, ChildBudget budget);

  // Between compiles a live process says nothing: a readable or hung-up socket means it died (the OOM
  // killer, an operator) or broke, and a stopped process (SIGSTOP) would not read; either must be
  // replaced rather than given a candidate. A process stopped later still cannot hold a compile past its
  // wall-clock limit: the request is sent before that deadline or not at all.
  bool idle_and_alive() const noexcept;

  pid_t pid() const noexcept { return pid_; }
  unsigned compiles() const noexcept { return compiles_; }

 private:
  std::optional<LaunchedCompile> process_;  // the launcher's hold on the process, until it is reaped
  pid_t pid_ = -1;
  int socket_ = -1;
  unsigned compiles_ = 0;
  // The scratch directory on the host, when there is no private root. Removed after the process is
  // reaped, and also when the constructor throws once it exists (no socket pair, no fork).
  struct HostScratch {
    std::string path;
    HostScratch() = default;
    HostScratch(const HostScratch&) = delete;
    HostScratch& operator=(const HostScratch&) = delete;
    ~HostScratch();
  } host_scratch_;
  std::uint64_t address_space_bytes_ = 0;
  void kill_and_reap() noexcept;
  bool reaped_ = false;
  bool launcher_lost_ = false;  // the launcher did not say how the process ended
  int wait_status_ = 0;
  double exit_cpu_ = 0.0;  // the process's total CPU time, once reaped
};

// In the launcher's fork of a process: the process's life, from the settings PooledCompiler encoded, with
// its end of the socket pair at `socket` and `launcher` its parent. Never returns.
[[noreturn]] void pooled_compiler_main(const ChildSetup& setup, const std::string& settings, int socket,
                                       pid_t launcher);

}  // namespace leap::sandbox::detail
