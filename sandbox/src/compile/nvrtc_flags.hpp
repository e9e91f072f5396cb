// SPDX-License-Identifier: Apache-2.0
// What CompileOptions become on NVRTC's command line (defined beside the options' checks, in
// compile_options.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_options.hpp"

namespace leap::sandbox::detail {

// NVRTC flags for the options, in a fixed order; no host paths (the include dirs are added later),
// so the list doubles as the options' canonical form in the cache key.
std::vector<std::string> nvrtc_flags(const CompileOptions& options);
// True for a real architecture (sm_XX), whose compile can give a CUBIN; false for a virtual one.
bool arch_is_sm(std::string_view arch) noexcept;

}  // namespace leap::sandbox::detail
