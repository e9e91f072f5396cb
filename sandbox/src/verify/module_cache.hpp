// SPDX-License-Identifier: Apache-2.0
// The modules a verification builds: CUDA sources for the CPU runtime and oracles as shared objects,
// both with the host compiler, kept in a directory under a name that is the hash of everything that
// makes the module (the kind, the compiler, the flags, the runtime's kernel headers or the oracle
// header, the source), so a second verification of an unchanged task compiles nothing. Modules are
// written under a temporary name and renamed, so verifications running side by side share the
// directory safely. Internal.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "leap/cpu_runtime/module.hpp"
#include "leap/oracle.hpp"

namespace leap::sandbox::verify {

struct BuiltModule {
  bool ok = false;
  std::string log;  // the compiler's words when !ok
  std::filesystem::path path;
  bool cached = false;
  double seconds = 0.0;  // the compile's wall time; 0 when cached
};

class ModuleCache {
 public:
  // dir is created if missing; optimization is the host compiler's level (-O0 .. -O2).
  explicit ModuleCache(std::filesystem::path dir, std::string optimization = "-O1");
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // A trusted CUDA source for the CPU runtime (leap/cpu_runtime/compile.hpp).
  BuiltModule kernel_module(std::string_view source, std::string_view file_name);
  // An oracle (leap/oracle.hpp) as a shared object.
  BuiltModule oracle_module(std::string_view source, std::string_view file_name);

  // The loaded module at a path kernel_module returned, loaded once.
  const cpu_runtime::Module& load_kernels(const std::filesystem::path& path);
  // The oracle's entry point in the shared object at a path oracle_module returned, loaded once.
  using OracleEntry = void (*)(oracle::Problem& problem);
  OracleEntry load_oracle(const std::filesystem::path& path);

  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  template <class Build>
  BuiltModule build(const std::string& key, Build&& compile);
  std::filesystem::path dir_;
  std::string optimization_;
  std::map<std::filesystem::path, cpu_runtime::Module> kernels_;
  std::map<std::filesystem::path, void*> oracles_;
};

// Where the oracle header (leap/oracle.hpp, embedded in the program) is written once per process.
const std::filesystem::path& oracle_include_dir();

}  // namespace leap::sandbox::verify
