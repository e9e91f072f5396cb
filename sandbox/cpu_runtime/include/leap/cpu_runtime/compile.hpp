// SPDX-License-Identifier: Apache-2.0
// Compiling a trusted .cu into a kernel module for the CPU runtime, with the host compiler (g++ or
// clang++, C++20). Never a candidate's source: the module runs in the caller's process.
//
// The steps, each a plain process (no shell):
//   1. preprocess:  c++ -E -x c++ -std=c++20 -isystem <kernel headers> -include leap_cpu/prelude.hpp SOURCE
//   2. rewrite:     find every __global__ (the kernels) and rewrite each __shared__ declaration into a
//                   reference into the running block's shared memory (leap_cpu/shared.hpp); append the
//                   module's table of kernels (leap_cpu/kernel_table.hpp)
//   3. compile:     c++ -x c++-cpp-output -std=c++20 -O2 -fPIC -shared -fvisibility=hidden
//                   -fno-strict-aliasing -ffp-contract=off -Wl,--no-undefined -o OUTPUT
// The same command line is `leap-cpu-cc -o OUTPUT SOURCE`, and CMake's leap_cpu_runtime_module()
// runs that at build time.
//
// A failed compile is a result: ok is false and log holds the compiler's words, at the lines of the
// source. A source the rewrite cannot read (a __shared__ variable at namespace scope, with an
// initialiser, ...) is such a result too. Only a broken environment throws (std::runtime_error: no
// compiler, no temporary directory).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace leap::cpu_runtime {

struct CompileOptions {
  std::string compiler;                             // empty: the C++ compiler leap was built with, else c++ on PATH
  std::string optimization = "-O2";                 // -O0 to -O3
  std::vector<std::filesystem::path> include_dirs;  // searched before the runtime's headers
  std::vector<std::string> defines;                 // NAME or NAME=VALUE
  std::vector<std::string> extra_flags;
  bool debug_info = false;               // -g
  std::filesystem::path kernel_include;  // empty: kernel_include_dir()
};

struct CompileResult {
  bool ok = false;
  std::string log;                   // the compiler's output (warnings too when ok)
  std::vector<std::string> kernels;  // the kernels the module lists, in source order
};

// Compiles `source` into the shared object `output`.
CompileResult compile_module(const std::filesystem::path& source, const std::filesystem::path& output,
                             const CompileOptions& options = {});
// The same for source text; `name` is the file name the diagnostics and source locations use.
CompileResult compile_module_text(std::string_view text, std::string_view name, const std::filesystem::path& output,
                                  const CompileOptions& options = {});

// Plain host C++ (no kernel headers, no rewrite) into a shared object, with the same compiler, the
// include_dirs, defines, optimization and flags of `options` (kernel_include is not used): what the
// task library's oracles are built with. Entry points must be marked visible (extern "C" and
// __attribute__((visibility("default"))), as LEAP_ORACLE does).
CompileResult compile_host_library_text(std::string_view text, std::string_view name,
                                        const std::filesystem::path& output, const CompileOptions& options = {});

// The C++ compiler an empty CompileOptions::compiler means: the one leap was built with when it is
// GCC, else c++ on PATH. Part of a cache key for modules built with it.
const std::string& host_compiler();

// The runtime's kernel headers (cuda_fp16.h, cooperative_groups.h, leap_cpu/prelude.hpp, ...): the
// copy embedded in this program, written once per process to a private temporary directory.
const std::filesystem::path& kernel_include_dir();

}  // namespace leap::cpu_runtime
