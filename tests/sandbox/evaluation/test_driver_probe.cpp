// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <leap/sandbox/driver_probe.hpp>
#include <string>

#include "evaluation/driver_probe.hpp"
#include "test_support.hpp"

using namespace leap::sandbox;

TEST_CASE("probe: the machine's GPU status is a status, never a crash", "[sandbox][probe]") {
  const GpuStatus s = probe_gpu();
  INFO(to_string(s.state) << ": " << s.reason);
  CHECK(s.state != GpuState::error);
  if (s.ok()) {
    CHECK_FALSE(s.devices.empty());
    CHECK(s.devices.front().cc_major >= 3);
  } else {
    CHECK_FALSE(s.reason.empty());
    CHECK(s.devices.empty());
  }
}

TEST_CASE("probe: a missing library is 'no driver'", "[sandbox][probe]") {
  const GpuStatus s = probe_gpu(leap_test::probe_library("libcuda-that-does-not-exist.so.1"));
  CHECK(s.state == GpuState::no_driver);
  CHECK(s.reason.find("libcuda-that-does-not-exist.so.1") != std::string::npos);
  CHECK(to_string(s.state) == "no driver");
}

TEST_CASE("probe: the toolkit's stub libcuda is 'stub driver'", "[sandbox][probe]") {
  const std::string stub = LEAP_TEST_STUB_LIBCUDA;
  if (stub.empty()) {
    WARN("no stub libcuda.so in the toolkit; skipped");
    return;
  }
  const GpuStatus s = probe_gpu(leap_test::probe_library(stub));
  CHECK(s.state == GpuState::stub_driver);
  CHECK(s.reason.find("34") != std::string::npos);
}

TEST_CASE("probe: a library without cuInit is an error status", "[sandbox][probe]") {
  const GpuStatus s = probe_gpu(leap_test::probe_library("libm.so.6"));
  CHECK(s.state == GpuState::error);
  CHECK(s.reason.find("cuInit") != std::string::npos);
}

TEST_CASE("probe: whether device code reaches pageable host memory is read per device", "[sandbox][probe]") {
  // The report of a machine with two devices, one of them (say, a Grace Hopper) with pageable access.
  const GpuStatus s = detail::parse_driver_probe(
      "driver 13000\nstate available\ndevice 0 9 0 1000 GH200\npageable 0 1\ndevice 1 8 0 1000 A100\npageable 1 0\n"
      "pageable 7 1\n");
  REQUIRE(s.devices.size() == 2);
  CHECK(s.devices[0].pageable_memory_access);
  CHECK_FALSE(s.devices[1].pageable_memory_access);  // a line for an ordinal that was not listed changes nothing
  // A report without the line (an older runner program): not pageable, as before.
  const GpuStatus old = detail::parse_driver_probe("state available\ndevice 0 9 0 1000 H100\n");
  REQUIRE(old.devices.size() == 1);
  CHECK_FALSE(old.devices[0].pageable_memory_access);
}
