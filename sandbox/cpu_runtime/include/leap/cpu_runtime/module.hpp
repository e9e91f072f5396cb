// SPDX-License-Identifier: Apache-2.0
// A kernel module: a trusted .cu compiled for the CPU runtime (compile.hpp) and loaded with dlopen.
// Loading runs the module's code in this process: only modules built from the project's or a task
// author's sources belong here, never a candidate's.
//
// The module lists its kernels (every non-template __global__ function at namespace scope, extern "C"
// or not) with each parameter's kind, size and alignment, read from the kernel's own type when it
// was compiled; a launch is checked against them (launch.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "leap/cpu_runtime/launch.hpp"

namespace leap::cpu_runtime {

struct ParamInfo {
  ParamKind kind = ParamKind::other;
  std::size_t size = 0;
  std::size_t align = 0;
};

// One kernel of a loaded module; valid while its Module lives.
class Kernel {
 public:
  const std::string& name() const noexcept { return name_; }
  std::span<const ParamInfo> params() const noexcept { return params_; }
  std::string signature() const;  // "row_sum(pointer, pointer, integer 4, integer 4)"

 private:
  friend class Module;
  friend LaunchResult launch(const Kernel&, Dim3, Dim3, std::size_t, std::span<void* const>, const Schedule&,
                             const LaunchOptions&);
  std::string name_;
  std::vector<ParamInfo> params_;
  const void* entry_ = nullptr;  // the module's table entry (leap_cpu::abi::Kernel)
  const void* table_ = nullptr;  // the module's table (leap_cpu::abi::ModuleTable)
};

// A module that cannot be loaded: the file, and what dlopen or the table check said.
class ModuleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Module {
 public:
  // Loads a module built by compile_module (or leap-cpu-cc); throws ModuleError.
  static Module load(const std::filesystem::path& shared_object);

  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;
  ~Module();

  std::span<const Kernel> kernels() const noexcept;
  const Kernel* find(std::string_view name) const noexcept;
  // Throws ModuleError naming the kernels the module has.
  const Kernel& kernel(std::string_view name) const;
  const std::filesystem::path& path() const noexcept;

 private:
  struct Impl;
  explicit Module(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leap::cpu_runtime
