// SPDX-License-Identifier: Apache-2.0
// The compile launcher: a single-threaded process, forked once when a Compiler is built, that forks
// every one-shot compile child and every pooled compiler (the stored-PCH creator too).
//
// Why not fork the child from the Compiler's own process: fork() copies only the calling thread, so a
// lock another thread held at that moment (the allocator's under a sanitizer, NVRTC's own, any
// library's) stays locked for ever in the child, which deadlocks at its first use of it, and the
// compile would end at its idle limit as if the candidate had stalled. The launcher has one thread,
// so nothing it forks inherits a lock in mid-use.
//
// The conversation, per compile (the Compiler side creates a socket pair and a pipe):
//   Compiler -> launcher, on the shared control socket: one byte carrying both descriptors
//   Compiler -> launcher, on the compile's socket: frame(cpu_ns, wall_ns, encoded NvrtcRequest)
//   launcher forks the child (the pipe's write end is its descriptor 3), then sends its pid
//   Compiler watches the pipe and the child (CPU clock, idle window, wall clock), kills it on a limit
//   Compiler -> launcher: "release"; the launcher reaps the child and sends its wait status and CPU
//   time. The child stays unreaped until then, so its pid (and process group) cannot be reused while
//   the Compiler may still signal it.
// Closing the compile's socket without "release" abandons the child: the launcher kills and reaps it.
// A pooled compiler is started the same way (its kind byte differs; the second descriptor is the
// pooled compiler's end of its socket pair and the frame carries its settings): the launcher sends its pid, and
// it stays the launcher's unreaped child until the pool releases it after killing it or hanging up.
//
// A launcher that stops answering is replaced. While the Compiler waits for one of its answers (a pid,
// a released child's end) it watches the launcher as it watches a compile: stopped (SIGSTOP, a
// debugger) for k_launcher_stopped_grace, or standing still (no CPU, neither runnable nor in the disk:
// deadlocked) for k_launcher_stall, or gone, it is taken as lost, not waited for. A start that found
// it lost kills it (its children die with it, PR_SET_PDEATHSIG) and starts a new one, once per
// launcher however many threads saw it; a compile whose launcher was lost before it said how the
// compile ended is compiled again on the new one (run_compile_child, CompilePool), since nothing of
// how it ended is known and none of it was the candidate's doing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "compile/compile_child.hpp"
#include "compile/nvrtc_compile.hpp"

namespace leap::sandbox::detail {

inline constexpr std::chrono::milliseconds k_launcher_stopped_grace{250};
inline constexpr std::chrono::seconds k_launcher_stall{5};

// How a compile child ended, as its reaper (the launcher) saw it.
struct ChildExit {
  int wait_status = 0;
  double cpu_seconds = 0;  // user + system
};

// One compile child in flight. Move-only; its destructor abandons the child if it was not released.
class LaunchedCompile {
 public:
  LaunchedCompile(pid_t pid, int result_fd, int control_fd, pid_t launcher) noexcept;
  LaunchedCompile(LaunchedCompile&& other) noexcept;
  LaunchedCompile& operator=(LaunchedCompile&&) = delete;
  LaunchedCompile(const LaunchedCompile&) = delete;
  ~LaunchedCompile();

  pid_t pid() const noexcept { return pid_; }
  int result_fd() const noexcept { return result_fd_; }  // the child's answer, then end of file
  // Once the caller is done with the child (has read its answer, or killed it): the launcher reaps it
  // and says how it ended. nullopt when the launcher is gone or stopped answering (see above).
  std::optional<ChildExit> release();
  // Whether the launcher is still there, and so still holds the child unreaped: only then may its pid
  // be signalled (a launcher that died took the child with it, and init may have reaped it).
  bool held() const noexcept;

 private:
  friend class CompileLauncher;
  pid_t pid_;
  int result_fd_;
  int control_fd_;
  pid_t launcher_;  // the launcher that holds it
};

class CompileLauncher {
 public:
  // Forks the launcher. `setup` must outlive this object (the launcher and its children read it).
  explicit CompileLauncher(const ChildSetup& setup);
  ~CompileLauncher();
  CompileLauncher(const CompileLauncher&) = delete;
  CompileLauncher& operator=(const CompileLauncher&) = delete;

  // Starts one confined compile child for `request`. Safe from several threads at once. A launcher
  // that died (it dies with the thread that made it, through PR_SET_PDEATHSIG, or was killed) or
  // stopped answering is replaced, once.
  // Throws std::runtime_error when no child could be started.
  LaunchedCompile launch(const NvrtcRequest& request, const ChildBudget& budget);
  // Starts one pooled compiler (pooled_compiler.hpp) on `compiler_socket`, the pooled compiler's end of its
  // socket pair (the caller still closes its own copy), with `settings` as PooledCompiler encodes them.
  // The pooled compiler is the launcher's child like a compile child: unreaped until released, killed and
  // reaped by the launcher when its LaunchedCompile is dropped unreleased. Its result_fd() is -1.
  // Throws std::runtime_error when no pooled compiler could be started.
  LaunchedCompile start_pooled_compiler(const std::string& settings, int compiler_socket);

  pid_t pid() const;                   // for tests
  std::uint64_t replacements() const;  // launchers started after the first, for tests and stats

 private:
  // Why a start failed: the launcher answered that it could not fork, or closed the request (it may be
  // dying), or was lost (gone, stopped, standing still, or no answer within the start limit).
  enum class Failure { none, refused, closed, lost };
  struct Attempt {
    LaunchedCompile launched;  // pid() -1 when none was started
    Failure failure = Failure::none;
    std::uint64_t generation = 0;  // of the launcher asked
  };
  Attempt try_launch(const std::string& message);
  // Sends one request of `kind` with `passed` for the new process.
  Attempt try_start(char kind, int passed, const std::string& message);
  // After a failed attempt on launcher `generation`: a lost one is replaced, one that is gone too (given
  // a moment to finish dying), a live one that refused is kept. Another thread's replacement counts.
  void recover(const Attempt& attempt);
  void start();  // with mutex_ held, or from the constructor
  void stop() noexcept;

  const ChildSetup& setup_;
  mutable std::mutex mutex_;  // the control socket and a restart
  pid_t pid_ = -1;
  int control_ = -1;
  std::uint64_t generation_ = 0;  // launchers started
};

}  // namespace leap::sandbox::detail
