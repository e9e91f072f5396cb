// SPDX-License-Identifier: Apache-2.0
// What a compile may produce (OutputLimits, in compiler.hpp): the checks of each size and the result
// a module over one becomes. The compile process checks NVRTC's sizes before it copies the code out
// (nvrtc_compile.cpp), and the Compiler checks every result again, a cached one included, before
// anyone sees it. Internal.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox::detail {

// Why `bytes` of PTX (or of CUBIN) are too many under `limits`: "compile refused at its output limit:
// the compiled PTX is N bytes, over the limit of L (OutputLimits::max_ptx_bytes); ..."; empty when
// they are not.
std::string ptx_over_limit(std::uint64_t bytes, const OutputLimits& limits);
std::string cubin_over_limit(std::uint64_t bytes, const OutputLimits& limits);
// The same for the kernels a CUBIN defines: their number, and their names' total length.
std::string kernels_over_limit(std::span<const std::string> kernels, const OutputLimits& limits);

// Makes `result` the answer for a module over a limit: status resource_limit, limit output_size, `why`
// before what NVRTC logged, and nothing of the module (no PTX, CUBIN, kernels or lowered names). Not
// an NVRTC verdict, so never cached: the limits belong to the Compiler, not to the source.
void refuse_output(CompileResult& result, const std::string& why);

// Checks a finished result's PTX, CUBIN and kernel list (read from the CUBIN when the result has none
// yet); refuses it when one is over. True when it was refused.
bool enforce_output_limits(CompileResult& result, const OutputLimits& limits);

}  // namespace leap::sandbox::detail
