// SPDX-License-Identifier: Apache-2.0
// leap-sandbox info: versions, the architectures NVRTC targets and the GPU status.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compile/compat_headers.hpp"
#include <leap/sandbox/compiler.hpp>
#include "confinement/confinement.hpp"
#include <leap/sandbox/driver_probe.hpp>
#include "evaluation/gpu_runner.hpp"
#include "evaluation/timer_choice.hpp"
#include <leap/version.hpp>

#include <leap/sandbox/compile_target.hpp>

#include "cli.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;
using nlohmann::json;

// What happens to an untrusted compile here: every layer in force, or the opt-in it needs.
std::string untrusted_compiles(const sb::ConfinementSupport& s) {
  if (s.full()) return "run, every layer in force";
  if (s.sufficient()) return "refused unless the weaker set is accepted (--accept-weaker-confinement)";
  return "refused unless run unconfined (--unconfined, trusted source only)";
}

json confinement_json() {
  const sb::ConfinementSupport& s = sb::confinement_support();
  json layers = json::object();
  for (const sb::ConfinementLayer& l : sb::describe_confinement()) {
    std::string key = l.name;
    std::replace(key.begin(), key.end(), ' ', '_');
    layers[key] = {{"in_force", l.in_force}, {"detail", l.detail}};
  }
  layers["landlock"]["abi"] = s.landlock_abi;
  return {{"in_force", s.full()},
          {"sufficient", s.sufficient()},
          {"untrusted_compiles", untrusted_compiles(s)},
          {"missing", s.missing()},
          {"missing_layers", s.missing_layers()},
          {"layers", layers},
          {"gpu_runner_executable", sb::find_gpu_runner_executable()}};
}

// The NVRTC compatibility layer, on by default (compile --no-compat-headers turns it off).
json compat_json() {
  json headers = json::array();
  for (const sb::CompatHeader& h : sb::compat_headers()) headers.push_back({{"name", h.name}, {"provides", h.summary}});
  return {{"enabled_by_default", true}, {"tag", sb::compat_headers_tag()}, {"headers", headers}};
}

// What serve and the fleet member compile in: a pool of confined workers keeping NVRTC's PCHs (one
// worker per -j handler); `compile` keeps a one-shot child per compile.
json compile_pool_json() {
  const sb::CompilePoolSettings defaults;
  return {{"used_by", {"serve", "fleet-member"}},
          {"processes", "one per -j handler"},
          {"max_compiles_per_process", defaults.max_compiles_per_process},
          {"pch", defaults.pch},
          {"pch_scratch_bytes", defaults.pch_scratch_bytes},
          {"nvrtc_pch_heap_bytes", sb::nvrtc_pch_heap_bytes()}};
}

// Precompiled headers kept on disk (compile, eval, serve, fleet-member): where, their budget, and the one
// thing they change about a compile process's address space.
const char* k_stored_pch_heap =
    "NVRTC's PCH heap is placed at one per-machine address (derived from the directory's key) in every compile "
    "process, so a PCH file serves every process; everything else stays randomised";

json stored_pch_json() {
  const sb::CompilerConfig defaults;
  const std::optional<std::string> dir = default_pch_dir();
  return {{"directory", dir ? json(*dir) : json(nullptr)},
          {"disk_bytes", defaults.pch_disk_bytes},
          {"heap", k_stored_pch_heap},
          {"needs", "a private root for a one-shot compile child (else not used, and stored_pch_stats says why)"}};
}

// What the evaluator compiles candidates for by default: the first device's target (its `a` target
// where it has one, compile_target.hpp), else sm_90 without a GPU.
std::string default_target(const std::vector<int>& archs, const sb::GpuStatus& gpu) {
  if (!gpu.ok() || gpu.devices.empty() || gpu.devices[0].cc_major <= 0) return "sm_90";
  return sb::device_compile_target(gpu.devices[0].cc_major, gpu.devices[0].cc_minor, archs);
}

int print_json(const std::vector<int>& archs, const sb::GpuStatus& gpu) {
  const sb::NvrtcVersion v = sb::nvrtc_version();
  const sb::TimerChoice timer = sb::timer_choice();
  json devices = json::array();
  for (const sb::DeviceInfo& d : gpu.devices) {
    devices.push_back(
        {{"ordinal", d.ordinal},
         {"name", d.name},
         {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"compile_target", sb::device_compile_target(d.cc_major, d.cc_minor, archs)},
         {"total_memory", d.total_memory},
         {"pageable_memory_access", d.pageable_memory_access},
         {"evaluations",
          d.pageable_memory_access ? "refused unless the GPU runner allows pageable host access" : "allowed"}});
  }
  const json j = {{"leap_version", leap::version_string},
                  {"nvrtc_version", std::to_string(v.major) + "." + std::to_string(v.minor)},
                  {"cupti_api_version", sb::cupti_api_version()},
                  {"supported_archs", archs},
                  {"default_compile_target", default_target(archs, gpu)},
                  {"cuda_include_dir", sb::default_cuda_include_dir()},
                  {"confinement", confinement_json()},
                  {"compile_pool", compile_pool_json()},
                  {"stored_pch", stored_pch_json()},
                  {"timer", {{"method", timer.method}, {"reason", timer.reason}}},
                  {"compat_headers", compat_json()},
                  {"gpu",
                   {{"status", std::string(sb::to_string(gpu.state))},
                    {"available", gpu.ok()},
                    {"driver_version", gpu.driver_version},
                    {"reason", gpu.reason},
                    {"devices", devices}}}};
  std::cout << j.dump() << "\n";
  return 0;
}

int print_text(const std::vector<int>& archs, const sb::GpuStatus& gpu) {
  std::cout << sb::toolchain_versions() << "\nsupported archs:";
  for (int a : archs) std::cout << " sm_" << a;
  std::cout << " (with an architecture-specific sm_XYa from sm_90 on)\ncompile target for candidates: "
            << default_target(archs, gpu);
  const sb::TimerChoice timer = sb::timer_choice();
  std::cout << "\nCUDA headers: " << sb::default_cuda_include_dir() << " (any header under it may be included)";
  std::cout << "\nNVRTC compatibility headers (on by default; " << sb::compat_headers_tag() << "):\n ";
  std::size_t column = 2;
  for (const sb::CompatHeader& h : sb::compat_headers()) {
    if (column + h.name.size() + 3 > 100) {
      std::cout << "\n ";
      column = 2;
    }
    std::cout << " <" << h.name << ">";
    column += h.name.size() + 3;
  }
  std::cout << "\ntimer: " << timer.method << " (" << timer.reason << ")\nGPU: " << sb::to_string(gpu.state);
  if (!gpu.reason.empty()) std::cout << " (" << gpu.reason << ")";
  if (gpu.driver_version > 0) {
    std::cout << ", driver " << gpu.driver_version / 1000 << "." << gpu.driver_version % 1000 / 10;
  }
  std::cout << "\n";
  for (const sb::DeviceInfo& d : gpu.devices) {
    std::cout << "  device " << d.ordinal << ": " << d.name << ", sm_" << d.cc_major << d.cc_minor << " (compiles for "
              << sb::device_compile_target(d.cc_major, d.cc_minor, archs) << "), " << d.total_memory / (1024 * 1024)
              << " MiB\n";
    if (d.pageable_memory_access) {
      std::cout
          << "    device code can read and write pageable host memory: evaluations are refused unless the operator "
             "allows it (GpuRunnerConfig::allow_pageable_host_access)\n";
    }
  }
  const sb::ConfinementSupport& s = sb::confinement_support();
  std::cout << "confinement of compile children: "
            << (s.full() ? std::string("in force, every layer")
                : s.sufficient()
                    ? "WEAKER, untrusted compiles " + untrusted_compiles(s) + " (" + s.missing() + ")"
                    : "INSUFFICIENT, untrusted compiles " + untrusted_compiles(s) + " (" + s.missing() + ")")
            << "\n";
  for (const sb::ConfinementLayer& l : sb::describe_confinement()) {
    std::cout << "  " << l.name << ": " << (l.in_force ? "yes" : "no") << " - " << l.detail << "\n";
  }
  const sb::CompilePoolSettings pool;
  std::cout
      << "pooled compilers (serve, fleet-member): one per -j handler, each confined once as above, replaced after "
      << pool.max_compiles_per_process << " compiles or any kill, limit or crash; NVRTC precompiled headers "
      << (pool.pch ? "on" : "off") << " (" << (pool.pch_scratch_bytes >> 20) << " MiB PCH directory, "
      << (sb::nvrtc_pch_heap_bytes() >> 20) << " MiB PCH heap per pooled compiler)\n";
  const std::optional<std::string> pch_dir = default_pch_dir();
  std::cout << "precompiled headers on disk (compile, eval, serve, fleet-member): "
            << (pch_dir ? *pch_dir : std::string("none (no cache directory)")) << ", "
            << (sb::CompilerConfig{}.pch_disk_bytes >> 20) << " MiB budget; " << k_stored_pch_heap << "\n";
  const std::string runner = sb::find_gpu_runner_executable();
  std::cout << "GPU runner: "
            << (runner.empty() ? "leap-sandbox-gpu-runner NOT FOUND (install it beside leap-sandbox)" : runner) << "\n";
  return 0;
}

int run_info(const Arguments& args) {
  bool as_json = false;
  for (const std::string& a : args) {
    if (a == "--json") as_json = true;
    else usage_error("info: unknown option '" + a + "'");
  }
  const std::vector<int> archs = sb::supported_archs();
  const sb::GpuStatus gpu = sb::probe_gpu();
  return as_json ? print_json(archs, gpu) : print_text(archs, gpu);
}

}  // namespace

const Command info_command{
    "info", "info [--json]",
    R"(  Prints the leap, NVRTC and CUPTI versions, the GPU architectures NVRTC supports and the target
  candidates compile for (each device's own, its architecture-specific sm_XYa from sm_90 on), the toolkit's
  headers and the NVRTC compatibility headers (standard and runtime headers NVRTC lacks), the GPU
  status (found through a probe in the GPU runner program that loads libcuda.so.1; "no driver", "stub
  driver" and "no device" come with the reason), which timer times kernels and why (CUPTI unless
  LEAP_SANDBOX_TIMER=events), and the OS confinement of compile children: each layer (Landlock
  with its ABI, seccomp, the private mount namespace, rlimits, process hygiene), in force or not and
  why, what an untrusted compile needs where one is missing, and where the GPU runner
  program is. Exits 0.
  --json               one JSON object instead of text
)",
    run_info};

}  // namespace leap_cli
