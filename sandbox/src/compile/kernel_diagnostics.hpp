// SPDX-License-Identifier: Apache-2.0
// What to tell a candidate whose module compiles but lacks the kernel it must define (the module's
// kernels are the CUBIN's entry symbols, CompileResult::kernels). Real kernels often come as `template <...>
// __global__` functions that only their host launcher instantiated; once the host code is gone the module is empty, and
// the policy needs to hear that, and the explicit instantiation that fixes it, in one sentence.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox {

// A `template <...> __global__ void name(...)` found in a source, with an explicit instantiation
// that would make it a kernel (type parameters as float, non-type ones by their default or name).
// Found in one pass that reads each byte of the source a bounded number of times, whatever the text;
// the code texts are cut (with "...") past 1024 characters.
struct KernelTemplate {
  std::string name;
  int line = 0;               // 1-based line of its __global__
  std::string instantiation;  // e.g. "template __global__ void scale<float, 256>(float* x, int n);"
  std::string parameters;     // its parameter list with those arguments, e.g. "float* x, int n"
  std::string call;           // a call with those arguments, e.g. "scale<float, 256>(x, n)"
};
std::vector<KernelTemplate> kernel_templates(std::string_view source);

// Empty when `kernels` holds what is needed: `entry` when one is given, else any kernel. Otherwise a
// sentence that says what is missing and what to write, e.g. "the module defines no kernel: the
// kernel template 'scale' (line 3) is never instantiated ...". `file_name` names the source.
std::string missing_kernel_advice(std::string_view source, std::string_view file_name,
                                  std::span<const std::string> kernels, std::string_view entry = {});

// The same for a compile's result, from the kernels it lists (empty when it lists none: no CUBIN, or
// not compiled). The scan reads the candidate's bytes, so its CPU time is added to the result's
// cpu_seconds, as the include jail's and the hashing's are.
std::string missing_kernel_advice(CompileResult& result, std::string_view source, std::string_view file_name,
                                  std::string_view entry = {});

}  // namespace leap::sandbox
