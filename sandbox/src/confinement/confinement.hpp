// SPDX-License-Identifier: Apache-2.0
// The confinement layers as steps a freshly forked (or spawned) child takes on itself. Everything that
// allocates is prepared in the parent; the apply_* functions only make system calls, so they are safe
// in a child forked from a multithreaded process. Each returns 0 or an errno value.
//
// What the operating system confines a compile child (and the GPU runner) with, and which of
// those layers this machine offers. The guarantee that no candidate reads a host file comes from
// these layers, never from the include jail's lexer:
//
//   layer             | what it stops                                   | needs
//   ------------------+-------------------------------------------------+------------------------------
//   landlock          | opening any file outside the toolkit's headers, | Linux >= 5.13 with Landlock
//                     | writing or executing anything; TCP (ABI >= 4);  | enabled (the running ABI is
//                     | signals and abstract sockets out (ABI >= 6)     | read at run time)
//   seccomp           | exec, sockets, ptrace, mount, namespaces, bpf,  | seccomp-bpf (Linux >= 3.5)
//                     | perf, userfaultfd, keyrings, module loading ... |
//   mount namespace   | a forbidden file looking different from a       | user namespaces (or root)
//                     | missing one: the root holds only the toolkit    |
//                     | (without it: refused, or accepted as weaker)    |
//   rlimits           | runaway memory, CPU, file output, core dumps    | always
//   process hygiene   | outliving the parent, inherited descriptors,   | always
//                     | environment, working directory                  |
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compiler.hpp"  // ConfinementLimits

namespace leap::sandbox {

// Which layers this machine offers, each with the reason when it does not.
struct ConfinementSupport {
  int landlock_abi = 0;         // 0 = no Landlock
  std::string landlock_reason;  // why not, when landlock_abi == 0
  bool seccomp = false;
  std::string seccomp_reason;
  bool mount_namespace = false;  // a private root holding only the toolkit
  std::string mount_namespace_reason;
  // Every layer is here: untrusted source is compiled with no opt-in.
  bool full() const noexcept { return landlock_abi > 0 && seccomp && mount_namespace; }
  // Landlock and seccomp are here: without the private root as well, untrusted source is compiled only
  // when the caller accepts the weaker set (CompilerConfig::accept_weaker_confinement); without either
  // of these two, only unconfined (CompilerConfig::unconfined), which is for trusted source.
  bool sufficient() const noexcept { return landlock_abi > 0 && seccomp; }
  // The missing layers by name ("landlock", "seccomp", "mount namespace"), as results list them.
  std::vector<std::string> missing_layers() const;
  // "Landlock unavailable: ...; seccomp unavailable: ...; mount namespace unavailable: ...", naming
  // every missing layer with why; empty when full().
  std::string missing() const;
};

// Probed once per process (in a short-lived child, so this process is not changed) and cached.
const ConfinementSupport& confinement_support();

// What a Landlock ABI adds, in words, for reports: e.g. 6 -> "filesystem, truncate, TCP, ioctl, scoped
// signals and abstract sockets".
std::string landlock_abi_features(int abi);

// The layers in force for a child started with this configuration, one line each, for `info`.
struct ConfinementLayer {
  std::string name;  // "landlock", "seccomp", "mount namespace", "rlimits", "process"
  bool in_force = false;
  std::string detail;  // what it does here, or why it is missing
};
std::vector<ConfinementLayer> describe_confinement(const ConfinementLimits& limits = {});

}  // namespace leap::sandbox

namespace leap::sandbox::detail {

// ---- Landlock (confinement_landlock.cpp) ----
int landlock_abi() noexcept;    // the running kernel's ABI; 0 when Landlock is absent or disabled
int landlock_errno() noexcept;  // why landlock_abi() is 0 (ENOSYS: not built, EOPNOTSUPP: disabled)

struct LandlockRule {
  std::string path;
  bool write = false;   // read (and list) always; write, truncate and device ioctls when set
  bool create = false;  // also make and remove regular files and directories beneath (a scratch directory)
};
struct LandlockPlan {
  std::vector<LandlockRule> rules;  // everything else is neither readable, writable nor executable
};
// Restricts the calling thread (and what it forks) to the plan with everything the ABI handles: file
// access, TCP bind/connect (ABI >= 4, none allowed), signals and abstract sockets (ABI >= 6, scoped).
// Sets no_new_privs. Paths that do not exist are skipped.
int apply_landlock(const LandlockPlan& plan, int abi) noexcept;

// ---- seccomp (confinement_seccomp.cpp) ----
struct SeccompFilter {
  std::vector<sock_filter> code;
};
// A deny-list filter (see the file for the list and why a deny-list): forbidden calls kill the process
// with SIGSYS; clone3 answers ENOSYS so thread creation falls back to clone, where only threads pass.
SeccompFilter compile_child_filter();
SeccompFilter gpu_runner_filter();  // the same without the thread and signal rules a CUDA driver needs
int apply_seccomp(const SeccompFilter& filter) noexcept;  // sets no_new_privs
bool seccomp_available(std::string& reason);

// ---- private root (confinement_mounts.cpp) ----
struct PrivateRoot {
  std::string mountpoint;  // an empty directory the child mounts its new root on
  struct Bind {
    std::string source;  // canonical host path
    std::string target;  // where it appears inside the new root (the path NVRTC is given)
  };
  std::vector<Bind> binds;  // read-only
  // A writable tmpfs of at most scratch_bytes at this path inside the new root (a pooled compile
  // compiler's PCH directory); empty = none. It lives as long as the namespace: it goes with the process.
  std::string scratch;
  std::uint64_t scratch_bytes = 0;
  // When set, the scratch directory is this host directory bound read-write instead of a tmpfs: the
  // process that creates a stored PCH writes it straight into the store's file system.
  std::string scratch_source;
  uid_t uid = 0;  // the parent's ids, mapped to root inside the new user namespace
  gid_t gid = 0;
};
// In the child: a new user and mount namespace whose root is a fresh tmpfs holding only the binds,
// then chdir("/"). `step` names what failed.
int enter_private_root(const PrivateRoot& root, const char*& step) noexcept;

// ---- private directories (confinement_paths.cpp) ----
// A fresh empty directory, mode 0700, that nobody else can have planted anything at: mkdtemp inside
// a base directory of this process's own (mkdtemp under $TMPDIR, mode 0700, checked with lstat before
// each use). `purpose` starts its name. Throws std::runtime_error naming where it could not be made.
std::string make_private_dir(std::string_view purpose);
// Removes one (with everything in it when `contents`), and the base directory with the last one.
void remove_private_dir(const std::string& path, bool contents) noexcept;

// ---- the layers this machine offers (confinement.cpp) ----
// Probes them afresh (confinement_support() caches the first answer for the process).
ConfinementSupport probe_confinement();
// Replaces the cached answer with a fresh probe. For tests that take a layer away in a forked child.
void reprobe_confinement_for_tests();

// ---- process hygiene and rlimits (confinement.cpp) ----
struct ChildLimits {
  std::uint64_t address_space_extra = 0;  // RLIMIT_AS = what the child inherited + this; 0 = unlimited
  std::uint64_t cpu_seconds = 0;          // RLIMIT_CPU soft limit; hard = soft + 1; 0 = unlimited
  std::uint64_t open_files = 0;           // 0 = unchanged
  std::uint64_t file_size = 0;            // RLIMIT_FSIZE; 0 = no file may be written at all
};
// PR_SET_PDEATHSIG(SIGKILL) and the parent re-check; false when the parent is already gone.
bool die_with_parent(pid_t parent) noexcept;
// Own process group, default handlers, empty signal mask, empty environment.
void reset_process_state() noexcept;
// Keeps `keep` as descriptor 3 (the result pipe), stdin/stdout on /dev/null, stderr as is, closes the rest.
int keep_only_descriptors(int keep) noexcept;
// RLIMIT_AS is `inherited` + limits.address_space_extra; also the file size limit and no core dumps.
int apply_limits(const ChildLimits& limits, std::uint64_t inherited) noexcept;
std::uint64_t mapped_bytes() noexcept;  // what the process maps now (/proc/self/statm); 0 when unknown

// Marks an address-space death: a handler that, on SIGSEGV/SIGBUS/SIGABRT, checks whether a small
// mapping still fits under RLIMIT_AS and exits with k_exit_address_space when it does not.
void install_address_space_marker() noexcept;
inline constexpr int k_exit_address_space = 86;
inline constexpr int k_exit_confinement_failed = 87;
inline constexpr int k_exit_parent_gone = 88;

// ---- the GPU runner (confinement_gpu_runner.cpp) ----
struct GpuRunnerConfinement {
  int landlock_abi = 0;  // 0 = none applied
  bool seccomp = false;
  std::string error;  // a layer that was available but could not be applied
};
// Landlock (mapped libraries' directories, the loader's cache, /proc/self and /sys/devices read-only;
// /dev/nvidia* read and write) and the GPU runner's seccomp filter, with what this kernel offers.
// Remembered for reports (ping, probe): gpu_runner_confinement() is what the last call applied.
GpuRunnerConfinement confine_gpu_runner();
const GpuRunnerConfinement& gpu_runner_confinement();

}  // namespace leap::sandbox::detail
