// SPDX-License-Identifier: Apache-2.0
// The run switches every program that evaluates kernels takes (leap-sandbox eval and serve, the GPU
// hostile suite, bench_timing, examples/sandbox_loop), parsed in one place so they are spelled and
// mean the same everywhere. Each weakens a default on purpose, for a host that needs it:
//
//   --unconfined                   compile without Landlock, seccomp and the private root (trusted
//                                  source only; CompilerConfig::unconfined)
//   --accept-weaker-confinement    compile where some confinement layer is missing, with the others;
//                                  results name what was not in force (CompilerConfig::
//                                  accept_weaker_confinement)
//   --allow-pageable-host-access   evaluate on a device whose kernels can read and write this
//                                  machine's pageable memory (GpuRunnerConfig::allow_pageable_host_access)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/evaluator.hpp"

namespace leap::sandbox {

struct RunSwitches {
  bool unconfined = false;
  bool accept_weaker_confinement = false;
  bool allow_pageable_host_access = false;

  // Sets the switch `arg` names and returns true; false (nothing changed) for any other argument.
  bool parse(std::string_view arg);
  // Sets these switches in `config` (each only turns its setting on; an unset one changes nothing).
  void apply(EvaluatorConfig& config) const;
  // The switches set, as they are spelled on a command line (e.g. to hand on to a child program).
  std::vector<std::string> arguments() const;
  // "none" or the switches set, comma-separated, for a program's first line of output.
  std::string describe() const;
};

// The switches taken out of `args` into `switches`; the remaining arguments in their order.
std::vector<std::string> take_run_switches(const std::vector<std::string>& args, RunSwitches& switches);

// The switches' help, one entry per switch, indented by two spaces, for a program's --help.
std::string_view run_switches_help() noexcept;

}  // namespace leap::sandbox
