// SPDX-License-Identifier: Apache-2.0
// The kernels a CUBIN defines, read from its ELF symbol table, and each kernel's parameters, read
// from its `.nv.info.<kernel>` section. Internal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/launch_plan.hpp"

namespace leap::sandbox::detail {

// Every kernel entry in a little-endian ELF64 CUBIN, sorted: a FUNC symbol with global or weak
// binding, marked as a CUDA entry in st_other (STO_CUDA_ENTRY, 0x10), whose code lies in the section
// ".text.<symbol name>". Device functions (local, unmarked) are not kernels. Every offset, size and
// string is checked against the buffer; nullopt when the bytes are not such an ELF file.
std::optional<std::vector<std::string>> cubin_kernels(std::string_view elf);

// Each kernel's parameters (of those cubin_kernels lists) in declaration order, from the EIATTR
// records of its ".nv.info.<kernel>" section: EIATTR_KPARAM_INFO (0x17; the size in bits 18..31 of
// its last word) or EIATTR_KPARAM_INFO_V2 (0x45; large parameter blocks) per parameter, and the
// block's total from EIATTR_CBANK_PARAM_SIZE (0x19) and EIATTR_PARAM_CBANK (0x0a). A kernel whose
// section is missing, malformed or inconsistent (ordinals not 0..n-1 once each, an empty or
// overlapping parameter, a block that does not end with its last parameter, two totals that
// differ) is left out: nothing about it is guessed. nullopt when the bytes are not an ELF file cubin_kernels reads.
std::optional<KernelParams> cubin_kernel_params(std::string_view elf);

}  // namespace leap::sandbox::detail
