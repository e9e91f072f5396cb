// SPDX-License-Identifier: Apache-2.0
// The module's table of kernels, as the footer the module compiler appends to a source builds it:
//
//   static const ::leap_cpu::abi::Kernel leap_cpu_kernels[] = {::leap_cpu::detail::kernel_entry<&row_sum>("row_sum")};
//   extern "C" __attribute__((visibility("default"))) const ::leap_cpu::abi::ModuleTable*
//   leap_cpu_module_attach(const ::leap_cpu::abi::Hooks* h) { return ::leap_cpu::detail::attach(h, leap_cpu_kernels,
//   1); }
//
// kernel_entry reads the kernel's parameter types from its own type, so the thread entry converts the
// launch's argument pointers to exactly those types, and the table records each parameter's kind,
// size and alignment for the runtime to check a launch against.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "leap_cpu/builtins.hpp"
#include "leap_cpu/shared.hpp"

namespace leap_cpu::detail {

template <class P>
constexpr abi::Param param_of() {
  using T = std::remove_cv_t<P>;
  abi::ParamKind kind = abi::ParamKind::other;
  if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>) {
    kind = abi::ParamKind::pointer;
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    kind = abi::ParamKind::integer;
  } else if constexpr (std::is_floating_point_v<T>) {
    kind = abi::ParamKind::floating;
  }
  return abi::Param{kind, static_cast<unsigned>(sizeof(T)), static_cast<unsigned>(alignof(T))};
}

template <class F>
struct Signature;
template <class... P>
struct Signature<void (*)(P...)> {
  static_assert((std::is_trivially_copyable_v<std::remove_cv_t<P>> && ...),
                "kernel parameters are copied bytes, as on the device: each must be trivially copyable");
  static constexpr unsigned count = sizeof...(P);
  static constexpr abi::Param params[sizeof...(P) == 0 ? 1 : sizeof...(P)] = {param_of<P>()...};

  template <auto K, std::size_t... I>
  static void call(void* const* args, std::index_sequence<I...>) {
    K(*static_cast<std::remove_cv_t<P>*>(args[I])...);
  }
  template <auto K>
  static void run(const abi::ThreadState* state, void* const* args) {
    self = state;
    try {
      call<K>(args, std::index_sequence_for<P...>{});
    } catch (...) {
      trap("an exception left the kernel");
    }
  }
};
template <class... P>
struct Signature<void (*)(P...) noexcept> : Signature<void (*)(P...)> {};

template <auto K>
constexpr abi::Kernel kernel_entry(const char* name) {
  using S = Signature<decltype(K)>;
  return abi::Kernel{name, &S::template run<K>, S::count, S::params};
}

inline const abi::ModuleTable* attach(const abi::Hooks* h, const abi::Kernel* kernels, unsigned count) {
  if (h == nullptr || h->version != abi::k_version || h->size != sizeof(abi::Hooks)) return nullptr;
  hooks = h;
  static const abi::ModuleTable table{abi::k_version, sizeof(abi::ThreadState), sizeof(abi::Hooks), count,
                                      kernels,        &static_shared_used};
  return &table;
}

}  // namespace leap_cpu::detail
