// SPDX-License-Identifier: Apache-2.0
// A compile result as JSON, the one spelling that the CLI, serve and the evaluation result share.
#include <nlohmann/json.hpp>

#include <leap/version.hpp>

#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox {

std::string to_json(const CompileResult& r) {
  // "kernels": the entries the module defines by symbol (null when there is no CUBIN to read).
  const nlohmann::json j = {
      {"status", to_string(r.status)}, {"log", r.log},
      {"seconds", r.seconds},          {"cache_hit", r.cache_hit},
      {"ptx_bytes", r.ptx.size()},     {"cubin_bytes", r.cubin.size()},
      {"cpu_seconds", r.cpu_seconds},  {"limit", to_string(r.limit)},
      {"unconfined", r.unconfined},    {"missing_layers", r.missing_layers},
      {"pch", to_string(r.pch)},       {"kernels", r.kernels ? nlohmann::json(*r.kernels) : nlohmann::json(nullptr)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string toolchain_versions() {
  const NvrtcVersion v = nvrtc_version();
  return std::string("leap ") + leap::version_string + ", NVRTC " + std::to_string(v.major) + "." +
         std::to_string(v.minor) + ", CUPTI API " + std::to_string(cupti_api_version());
}

}  // namespace leap::sandbox
