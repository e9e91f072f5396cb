// SPDX-License-Identifier: Apache-2.0
// A shipped source compiled as the GPU path compiles a candidate (NVRTC, the sandbox's compat headers
// and include policy), in process (the source is the project's), with a disk cache beside the
// verifier's modules. Internal.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace leap::sandbox::verify {

struct NvrtcOutcome {
  bool compiled = false;
  bool source_error = false;  // not compiled, and NVRTC's own verdict on the source (not a limit)
  std::string log;            // NVRTC's words (or why NVRTC could not be used)
  bool available = true;      // false: no usable NVRTC here
  std::string cubin;          // the module, when compiled
};

// arch: the target, e.g. "sm_90a" (device_compile_target); empty: the compiler's default.
NvrtcOutcome nvrtc_compile(const std::string& source, const std::filesystem::path& cache_dir,
                           const std::string& arch = {});
// The same for many sources at once (several compiles at a time), in their order.
std::vector<NvrtcOutcome> nvrtc_compile_all(const std::vector<std::string>& sources,
                                            const std::filesystem::path& cache_dir, const std::string& arch = {});

}  // namespace leap::sandbox::verify
