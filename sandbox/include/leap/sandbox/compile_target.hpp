// SPDX-License-Identifier: Apache-2.0
// Which target a device's candidates compile for. From compute capability 9.0 on, each architecture
// has an architecture-specific target, sm_XYa (sm_90a, sm_100a, sm_103a, sm_110a, sm_120a, ...),
// whose instructions the plain sm_XY lacks: Hopper's wgmma and setmaxnreg, Blackwell's tcgen05. A
// correct tensor-core kernel compiled for sm_90 fails ptxas, a compile_error the candidate did not
// earn, so the evaluator compiles for the `a` target of the device it runs on. Code for sm_XYa runs
// only on that exact compute capability, which is the device's own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leap::sandbox {

// "sm_XYa" when compute capability X.Y has an architecture-specific target among `supported` (NVRTC's
// numbers, supported_archs(); the `a` targets are not listed apart, so every supported number from 90
// on counts), else "sm_XY". E.g. (9, 0) -> "sm_90a", (8, 9) -> "sm_89".
std::string device_compile_target(int cc_major, int cc_minor, const std::vector<int>& supported);
// The same against this NVRTC's supported_archs().
std::string device_compile_target(int cc_major, int cc_minor);

// For a compile log that refuses an instruction for lack of the architecture-specific target
// (ptxas: "Instruction 'wgmma.fence' not supported on .target 'sm_90'"), a sentence that names the
// target that has it and how to get it; empty for any other log or an arch that has none.
std::string arch_specific_advice(std::string_view log, std::string_view arch);

}  // namespace leap::sandbox
