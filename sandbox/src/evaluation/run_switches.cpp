// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/run_switches.hpp"

namespace leap::sandbox {
namespace {

constexpr std::string_view k_unconfined = "--unconfined";
constexpr std::string_view k_weaker = "--accept-weaker-confinement";
constexpr std::string_view k_pageable = "--allow-pageable-host-access";

}  // namespace

bool RunSwitches::parse(std::string_view arg) {
  if (arg == k_unconfined) unconfined = true;
  else if (arg == k_weaker) accept_weaker_confinement = true;
  else if (arg == k_pageable) allow_pageable_host_access = true;
  else return false;
  return true;
}

void RunSwitches::apply(EvaluatorConfig& config) const {
  if (unconfined) config.compiler.unconfined = true;
  if (accept_weaker_confinement) config.compiler.accept_weaker_confinement = true;
  if (allow_pageable_host_access) config.gpu_runner.allow_pageable_host_access = true;
}

std::vector<std::string> RunSwitches::arguments() const {
  std::vector<std::string> out;
  if (unconfined) out.emplace_back(k_unconfined);
  if (accept_weaker_confinement) out.emplace_back(k_weaker);
  if (allow_pageable_host_access) out.emplace_back(k_pageable);
  return out;
}

std::string RunSwitches::describe() const {
  std::string out;
  for (const std::string& a : arguments()) out += (out.empty() ? "" : ", ") + a;
  return out.empty() ? "none" : out;
}

std::vector<std::string> take_run_switches(const std::vector<std::string>& args, RunSwitches& switches) {
  std::vector<std::string> rest;
  for (const std::string& a : args) {
    if (!switches.parse(a)) rest.push_back(a);
  }
  return rest;
}

std::string_view run_switches_help() noexcept {
  return R"(  --unconfined         compile without Landlock, seccomp and the private root, for machines that
                       lack them (results say compile.unconfined); never for untrusted source
  --accept-weaker-confinement
                       compile where a confinement layer is missing (e.g. the private root without
                       user namespaces) with the others; results name the missing layers
  --allow-pageable-host-access
                       evaluate even on a device whose kernels can read and write this machine's
                       pageable memory (PAGEABLE_MEMORY_ACCESS; info shows it); without it the GPU
                       runner refuses there, since a candidate could reach the harness's memory
)";
}

}  // namespace leap::sandbox
