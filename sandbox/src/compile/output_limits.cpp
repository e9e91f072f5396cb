// SPDX-License-Identifier: Apache-2.0
#include "compile/output_limits.hpp"

#include "compile/elf_kernels.hpp"

namespace leap::sandbox::detail {
namespace {

constexpr const char* k_why =
    "; a module that large comes from unrolling or instantiating far beyond any real kernel: unroll less, "
    "instantiate only the templates the kernel launches, and keep large tables out of __device__ initialisers";

std::string over(const char* what, std::uint64_t value, const char* unit, std::uint64_t limit, const char* field) {
  return std::string("compile refused at its output limit: ") + what + " " + std::to_string(value) + unit +
         ", over the limit of " + std::to_string(limit) + " (OutputLimits::" + field + ")" + k_why;
}

}  // namespace

std::string ptx_over_limit(std::uint64_t bytes, const OutputLimits& limits) {
  if (bytes <= limits.max_ptx_bytes) return {};
  return over("the compiled PTX is", bytes, " bytes", limits.max_ptx_bytes, "max_ptx_bytes");
}

std::string cubin_over_limit(std::uint64_t bytes, const OutputLimits& limits) {
  if (bytes <= limits.max_cubin_bytes) return {};
  return over("the compiled CUBIN is", bytes, " bytes", limits.max_cubin_bytes, "max_cubin_bytes");
}

std::string kernels_over_limit(std::span<const std::string> kernels, const OutputLimits& limits) {
  if (kernels.size() > limits.max_kernels)
    return over("the module defines", kernels.size(), " kernels", limits.max_kernels, "max_kernels");
  std::uint64_t name_bytes = 0;
  for (const std::string& k : kernels) name_bytes += k.size();
  if (name_bytes > limits.max_kernel_name_bytes) {
    return over("the names of the module's kernels take", name_bytes, " bytes", limits.max_kernel_name_bytes,
                "max_kernel_name_bytes");
  }
  return {};
}

void refuse_output(CompileResult& result, const std::string& why) {
  result.status = CompileStatus::resource_limit;
  result.limit = CompileLimit::output_size;
  result.nvrtc_verdict = false;
  result.log = why + (result.log.empty() ? "" : "\n" + result.log);
  result.ptx.clear();
  result.ptx.shrink_to_fit();
  result.cubin.clear();
  result.cubin.shrink_to_fit();
  result.lowered_names.clear();
  result.kernels.reset();
}

bool enforce_output_limits(CompileResult& result, const OutputLimits& limits) {
  std::string why = ptx_over_limit(result.ptx.size(), limits);
  if (why.empty()) why = cubin_over_limit(result.cubin.size(), limits);
  if (why.empty() && !result.cubin.empty()) {
    if (!result.kernels) result.kernels = cubin_kernels(result.cubin);
    if (result.kernels) why = kernels_over_limit(*result.kernels, limits);
  }
  if (why.empty()) return false;
  refuse_output(result, why);
  return true;
}

}  // namespace leap::sandbox::detail
