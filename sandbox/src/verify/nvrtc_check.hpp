// SPDX-License-Identifier: Apache-2.0
// A shipped source compiled as the GPU path compiles a candidate (NVRTC, the sandbox's compat headers
// and include policy), in process (the source is the project's), with a disk cache beside the
// verifier's modules. Internal.
#pragma once

#include <filesystem>
#include <string>

namespace leap::sandbox::verify {

struct NvrtcOutcome {
  bool compiled = false;
  bool source_error = false;  // not compiled, and NVRTC's own verdict on the source (not a limit)
  std::string log;            // NVRTC's words (or why NVRTC could not be used)
  bool available = true;      // false: no usable NVRTC here
};

NvrtcOutcome nvrtc_compile(const std::string& source, const std::filesystem::path& cache_dir);

}  // namespace leap::sandbox::verify
