// SPDX-License-Identifier: Apache-2.0
// leap-cpu-cc: compiles a trusted .cu into a kernel module for the CPU runtime, the command-line form
// of compile_module (leap/cpu_runtime/compile.hpp); CMake's leap_cpu_runtime_module() runs it.
//
//   leap-cpu-cc [-I DIR]... [-D NAME[=VALUE]]... [-O0|-O1|-O2|-O3] [-g] [--compiler CXX]
//               [--kernel-include DIR] -o MODULE.so SOURCE.cu
//
// Prints the compiler's diagnostics and the kernels the module lists; exits 0 when it compiled, 1
// when it did not, 2 on misuse.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "leap/cpu_runtime/compile.hpp"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "leap-cpu-cc: %s\nusage: leap-cpu-cc [-I DIR]... [-D NAME[=VALUE]]... [-O0|-O1|-O2|-O3] [-g] "
               "[--compiler CXX] [--kernel-include DIR] -o MODULE.so SOURCE.cu\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  leap::cpu_runtime::CompileOptions options;
  std::string output, source;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> std::string {
      if (a.size() > flag.size()) return std::string(a.substr(flag.size()));
      if (i + 1 >= argc) return {};
      return argv[++i];
    };
    if (a.rfind("-I", 0) == 0) {
      options.include_dirs.emplace_back(value("-I"));
    } else if (a.rfind("-D", 0) == 0) {
      options.defines.push_back(value("-D"));
    } else if (a == "-O0" || a == "-O1" || a == "-O2" || a == "-O3") {
      options.optimization = std::string(a);
    } else if (a == "-g") {
      options.debug_info = true;
    } else if (a == "--compiler") {
      options.compiler = value("--compiler");
    } else if (a == "--kernel-include") {
      options.kernel_include = value("--kernel-include");
    } else if (a == "-o") {
      output = value("-o");
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + std::string(a)).c_str());
    } else if (source.empty()) {
      source = std::string(a);
    } else {
      return usage("one source at a time");
    }
  }
  if (source.empty() || output.empty()) return usage("name a source and -o MODULE.so");
  try {
    const leap::cpu_runtime::CompileResult r = leap::cpu_runtime::compile_module(source, output, options);
    std::fputs(r.log.c_str(), stderr);
    if (!r.ok) return 1;
    for (const std::string& k : r.kernels) std::printf("kernel %s\n", k.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leap-cpu-cc: %s\n", e.what());
    return 1;
  }
}
