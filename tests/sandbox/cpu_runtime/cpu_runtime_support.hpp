// SPDX-License-Identifier: Apache-2.0
// What the CPU runtime's tests share: the modules built for them, and a launch under every schedule.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "leap/cpu_runtime/launch.hpp"
#include "leap/cpu_runtime/module.hpp"

namespace leap::cpu_runtime::test {

// A module built by tests/sandbox/cpu_runtime/CMakeLists.txt (leap_cpu_test_barrier, ...).
inline const Module& module(const std::string& name) {
  static std::vector<std::pair<std::string, Module>> loaded;
  for (const auto& [n, m] : loaded)
    if (n == name) return m;
  loaded.emplace_back(name, Module::load(std::string(LEAP_CPU_TEST_MODULES) + "/" + name + ".so"));
  return loaded.back().second;
}

inline const Kernel& kernel(const std::string& module_name, const std::string& kernel_name) {
  return module(module_name).kernel(kernel_name);
}

// The schedules every check runs under: in order, reversed, three random ones.
inline std::vector<Schedule> all_schedules() { return Schedule::standard(7, 3); }

template <class... A>
LaunchResult run(const Kernel& k, Dim3 grid, Dim3 block, std::size_t shared, const Schedule& s,
                 const LaunchOptions& options, const A&... args) {
  const Argument list[] = {Argument::of(args)...};
  return launch(k, grid, block, shared, std::span<const Argument>(list, sizeof...(A)), s, options);
}

template <class... A>
void run_ok(const Kernel& k, Dim3 grid, Dim3 block, std::size_t shared, const Schedule& s, const A&... args) {
  const LaunchResult r = run(k, grid, block, shared, s, LaunchOptions{}, args...);
  INFO(r.message);
  REQUIRE(r.ok());
}

}  // namespace leap::cpu_runtime::test
