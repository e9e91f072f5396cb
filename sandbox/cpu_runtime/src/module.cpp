// SPDX-License-Identifier: Apache-2.0
// Loading a kernel module: dlopen, the one exported function (leap_cpu_module_attach) given the
// runtime's hooks, and the table it returns checked against this runtime's ABI.
#include "leap/cpu_runtime/module.hpp"

#include <dlfcn.h>

#include <utility>

#include "block_runner.hpp"
#include "kernel_include/leap_cpu/abi.hpp"

namespace leap::cpu_runtime {

struct Module::Impl {
  std::filesystem::path path;
  void* handle = nullptr;
  std::vector<Kernel> kernels;
  ~Impl() {
    if (handle != nullptr) dlclose(handle);
  }
};

namespace {

ParamKind kind_of(leap_cpu::abi::ParamKind k) {
  switch (k) {
    case leap_cpu::abi::ParamKind::pointer: return ParamKind::pointer;
    case leap_cpu::abi::ParamKind::integer: return ParamKind::integer;
    case leap_cpu::abi::ParamKind::floating: return ParamKind::floating;
    case leap_cpu::abi::ParamKind::other: break;
  }
  return ParamKind::other;
}

}  // namespace

std::string Kernel::signature() const {
  std::string s = name_ + "(";
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::string(to_string(params_[i].kind));
    if (params_[i].kind != ParamKind::pointer) s += " " + std::to_string(params_[i].size);
  }
  return s + ")";
}

Module::Module(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&&) noexcept = default;
Module::~Module() = default;

Module Module::load(const std::filesystem::path& shared_object) {
  auto impl = std::make_unique<Impl>();
  impl->path = shared_object;
  const std::string where = "kernel module " + shared_object.string();
  impl->handle = dlopen(shared_object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (impl->handle == nullptr) {
    const char* e = dlerror();
    throw ModuleError(where + ": cannot load it: " + (e != nullptr ? e : "dlopen failed"));
  }
  void* symbol = dlsym(impl->handle, leap_cpu::abi::k_attach_symbol);
  if (symbol == nullptr)
    throw ModuleError(where + ": no " + leap_cpu::abi::k_attach_symbol +
                      ": not a module of the CPU runtime (build it with compile_module or leap-cpu-cc)");
  const auto attach = reinterpret_cast<leap_cpu::abi::Attach>(symbol);
  const leap_cpu::abi::ModuleTable* table = attach(&detail::runtime_hooks());
  if (table == nullptr || table->version != leap_cpu::abi::k_version ||
      table->thread_state_size != sizeof(leap_cpu::abi::ThreadState) ||
      table->hooks_size != sizeof(leap_cpu::abi::Hooks))
    throw ModuleError(where + ": built against other kernel headers than this runtime's (ABI version " +
                      std::to_string(table != nullptr ? table->version : 0) + ", this runtime's " +
                      std::to_string(leap_cpu::abi::k_version) + "): compile it again");
  for (unsigned i = 0; i < table->kernel_count; ++i) {
    const leap_cpu::abi::Kernel& k = table->kernels[i];
    Kernel kernel;
    kernel.name_ = k.name;
    for (unsigned p = 0; p < k.param_count; ++p)
      kernel.params_.push_back(ParamInfo{kind_of(k.params[p].kind), k.params[p].size, k.params[p].align});
    kernel.entry_ = &k;
    kernel.table_ = table;
    impl->kernels.push_back(std::move(kernel));
  }
  return Module(std::move(impl));
}

std::span<const Kernel> Module::kernels() const noexcept { return impl_->kernels; }

const Kernel* Module::find(std::string_view name) const noexcept {
  for (const Kernel& k : impl_->kernels)
    if (k.name() == name) return &k;
  return nullptr;
}

const Kernel& Module::kernel(std::string_view name) const {
  if (const Kernel* k = find(name)) return *k;
  std::string names;
  for (const Kernel& k : impl_->kernels) names += (names.empty() ? "" : ", ") + k.name();
  throw ModuleError("kernel module " + impl_->path.string() + " has no kernel '" + std::string(name) +
                    "' (it has: " + (names.empty() ? "none" : names) +
                    "; a kernel is a non-template __global__ function at namespace scope)");
}

const std::filesystem::path& Module::path() const noexcept { return impl_->path; }

}  // namespace leap::cpu_runtime
