// SPDX-License-Identifier: Apache-2.0
// The physical floor under every timing: the net for timer cheats nobody has thought of yet. A run
// must at least read its inputs once from device memory (the caches are flushed before every timed
// run, so they come from DRAM), and no memory moves faster than the device's peak bandwidth. A
// timed run faster than that is not paid, whatever its outputs: the evaluation says so with the
// figures. Internal.
#pragma once

#include <cstdint>
#include <optional>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail {

// Headroom over the peak the device reports: boost clocks and the attributes' rounding must never
// turn an honest kernel's time into a breach, so the floor is the peak time divided by this.
constexpr double k_floor_headroom = 1.5;

// The bytes a run of `task` at `sizes` must read at least once: its `in` and `inout` buffers, except
// those drawn as zeros (a kernel may know from the spec that they hold nothing). Outputs are not
// counted: a write can end in the L2 before the run's timer stops.
std::uint64_t bytes_read_at_least(const TaskSpec& task, const Sizes& sizes);

struct TimingFloor {
  std::uint64_t bytes = 0;  // bytes_read_at_least
  double bandwidth = 0.0;   // the device's peak, bytes per second
  double floor_ms = 0.0;    // bytes / (bandwidth * k_floor_headroom), in milliseconds
};

// The floor for `bytes` on a device of `bandwidth` bytes per second; nullopt when the device does not
// report its bandwidth (no floor rather than a made-up one).
std::optional<TimingFloor> timing_floor(std::uint64_t bytes, double bandwidth);

}  // namespace leap::sandbox::detail
