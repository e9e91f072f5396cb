// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the include jail's scanner over a translation unit and a shipped header. The
// input is split at the first NUL-free "\n//--\n" line: before it the source, after it the header.
// Every verdict must be self-consistent: a refusal says why, an allowed source names no refusal.
#include "compile/include_jail.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sb = leap::sandbox;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sb::IncludePolicy policy = sb::IncludePolicy::cuda_defaults();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t split = text.find("\n//--\n");
  sb::CompileJob job;
  job.file_name = "kernel.cu";
  job.source = std::string(text.substr(0, split));
  if (split != std::string_view::npos) job.headers.push_back({"shipped.h", std::string(text.substr(split + 6))});
  const sb::JailVerdict v = sb::check_job(job, policy);
  if (v.allowed != v.refusals.empty()) std::abort();
  if (!v.allowed && v.message.empty()) std::abort();
  (void)sb::scan_source(job.source, job.file_name, job.headers, policy);
  return 0;
}
