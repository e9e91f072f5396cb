// SPDX-License-Identifier: Apache-2.0
// One compile in a child process: confined by the OS before the source reaches NVRTC, limited by its
// own CPU time, watched by the parent, which kills it (and its process group) past a limit.
#pragma once

#include <time.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "confinement/confinement.hpp"
#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox::detail {

class CompileLauncher;
struct NvrtcRequest;

// Prepared once per Compiler: everything the child needs, so the child allocates nothing to confine itself.
struct ChildSetup {
  bool confined = true;  // Landlock + seccomp (+ the private root where available)
  int landlock_abi = 0;
  LandlockPlan landlock;  // read-only toolkit headers
  SeccompFilter filter;
  bool private_root = false;
  PrivateRoot root;      // its mountpoint is `work_dir`
  std::string work_dir;  // an empty directory: the private root's mountpoint, else the cwd
  ConfinementLimits limits;
  // Stored precompiled headers (enable_stored_pch): NVRTC maps its PCH heap and, using a PCH, backs
  // it with a temporary file, so a one-shot child then gets a small tmpfs as TMPDIR, the heap on top
  // of its address-space limit, and a file size limit of the tmpfs's size.
  std::string tmpdir_env;  // "TMPDIR=..."; empty = none
  std::uint64_t pch_heap_bytes = 0;
  std::uint64_t pch_scratch_bytes = 0;
};

// Lets compile processes of this setup read the stored PCH files in `files_dir` (read-only: bound into
// the private root, and a Landlock read rule). False where a confined child could not use them (no
// private root: nowhere private to put NVRTC's temporary file); the setup is then unchanged.
bool enable_stored_pch(ChildSetup& setup, const std::string& files_dir, std::uint64_t heap_bytes);
// Builds the setup for these include directories; work_dir is made with make_private_dir (a random
// name in a directory of this process's own, mode 0700) and must be removed with remove_work_dir.
ChildSetup make_child_setup(const std::vector<std::string>& include_dirs, const ConfinementLimits& limits,
                            bool confined);
void remove_work_dir(const ChildSetup& setup) noexcept;

// In a compiler process (a one-shot child or a pooled compiler), once its descriptors are closed: enters
// the private root (or chdirs into the empty work directory), applies `limits` over what it maps now
// and the address-space marker, then Landlock and seccomp. `root` and `landlock` may differ from the
// setup's (a pooled compiler adds its PCH directory). Returns 0, or an errno with `step` naming what
// failed. Only system calls: safe after fork in a multithreaded parent.
int confine_compiler_process(const ChildSetup& setup, const PrivateRoot& root, const LandlockPlan& landlock,
                             const ChildLimits& limits, const char*& step) noexcept;

// In a compiler process that could not confine itself: says so on descriptor 3 ("the compile `who`
// could not confine itself (step: error)"), which the parent turns into its exception, and exits with
// k_exit_confinement_failed. Only system calls.
[[noreturn]] void exit_confinement_failed(const char* who, const char* step, int error) noexcept;

// NVRTC's front end reports a failed allocation itself and returns; under RLIMIT_AS that is the
// address-space limit, and the compiler process exits with k_exit_address_space. (A candidate's
// #error cannot forge it: its text reads "#error directive: ...".)
bool ran_out_of_address_space(const CompileResult& result) noexcept;

struct ChildBudget {
  std::chrono::nanoseconds cpu;  // the child's CPU time
  // Backstop: the time the process may spend neither running, waiting for a CPU nor in the disk
  // (stalled, stopped, sleeping). Time it is merely waiting for a busy machine does not count, so an
  // oversubscribed machine does not end an honest compile (its CPU limit still does); wall_cap bounds
  // the whole.
  std::chrono::nanoseconds wall;
  std::chrono::milliseconds stated;  // the limit as the job states it (cpu is what is left of it), for messages
  std::chrono::nanoseconds idle{0};  // ended once its CPU time stands still this long; 0 = never
};

// The ceiling on a compile's wall-clock time in all, however the machine is loaded.
inline constexpr int k_wall_cap_factor = 10;
inline std::chrono::nanoseconds wall_cap(const ChildBudget& budget) { return k_wall_cap_factor * budget.wall; }

// What the parent watches a compiler process for. The idle window catches what neither limit does
// soon: a process that stopped using CPU without answering (deadlocked, or stopped by a signal) would
// otherwise hold its caller until the wall-clock backstop, ten times the CPU limit by default.
struct Watch {
  pid_t pid = -1;                  // the process, whose state tells stalled from starved
  std::optional<clockid_t> clock;  // its CPU clock; none: no CPU or idle limit
  std::chrono::nanoseconds cpu_limit{0};
  std::chrono::nanoseconds idle_limit{0};               // 0 = no idle window
  std::chrono::steady_clock::time_point wall_deadline;  // the ceiling: wall_cap from the start
  std::chrono::nanoseconds wall_limit{0};               // the backstop (ChildBudget::wall); 0 = the ceiling only
};

// The parent's watch over a compiler process: reads `fd` into `data` until `done(data)` says a whole
// answer is there (null: until the process closes it), sampling the CPU clock and the process's state
// every 20 ms. Returns the limit that came first: cpu_time once the clock reaches cpu_limit; idle once
// it has stood still for idle_limit while the process was neither runnable nor waiting for the disk (a
// process the machine is too busy to run is starved, not stalled); wall_clock once it has spent
// wall_limit neither runnable nor in the disk, or at wall_deadline; none when the answer or the end of
// file came first.
CompileLimit watch_compiler_process(int fd, const Watch& watch, std::string& data,
                                    bool (*done)(const std::string& data));

// Runs `request` in a confined child that `launcher` forks, and watches it. The returned result
// carries status, limit and cpu_seconds as the parent saw them. Throws std::runtime_error when the
// child could not be started or confined (a broken environment).
CompileResult run_compile_child(CompileLauncher& launcher, const ChildSetup& setup, ChildBudget budget,
                                const NvrtcRequest& request);

// NVRTC says why it cannot open a file ("cannot open source file "x": Permission denied", or "Not a
// directory", "Too many levels of symbolic links"...) for every reason but a missing file. Each reason
// tells a candidate something about the host (that /etc/passwd is a file, that a path is forbidden),
// so every failure to open reads as a missing file does: the quoted name and nothing after it. (A
// private root makes nearly everything missing; this covers the rest, and machines without one.)
std::string same_words_for_every_unopenable_file(std::string log);

}  // namespace leap::sandbox::detail
