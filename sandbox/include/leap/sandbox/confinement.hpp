// SPDX-License-Identifier: Apache-2.0
// What the operating system confines a compile child (and the evaluation worker) with, and which of
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

#include <cstdint>
#include <string>
#include <vector>

namespace leap::sandbox {

// Resource limits of a confined compile child.
struct ConfinementLimits {
  std::uint64_t address_space_bytes = 4ull << 30;  // RLIMIT_AS; includes what the child inherits (NVRTC itself)
  unsigned max_open_files = 64;                    // RLIMIT_NOFILE
};

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
  std::string name;    // "landlock", "seccomp", "mount namespace", "rlimits", "process"
  bool in_force = false;
  std::string detail;  // what it does here, or why it is missing
};
std::vector<ConfinementLayer> describe_confinement(const ConfinementLimits& limits = {});

}  // namespace leap::sandbox
