// SPDX-License-Identifier: Apache-2.0
// The device's input generator against its host twin (input_generator.hpp), once per GPU runner
// before its first evaluation. Every timed run's fresh inputs are the device's draw; the host twin
// is what the tests and the CPU fake hold it to. A sample (every dtype, every generator kind,
// extreme ranges, two seeds, sizes that are not a multiple of a block) is drawn on the device, read
// back and compared bit for bit with the host's; a random draw within the dtype's range must also
// change with the seed in most elements
// (a degenerate draw would let a kernel that memoises its answer pass every timed run). On any
// difference the runner evaluates nothing. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "evaluation/gpu_driver.hpp"
#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail {

struct DrawCheckCase {
  DType dtype = DType::float32;
  Generator generator;
  std::uint64_t seed = 0;
  std::size_t n = 0;
};

// The sample the runner draws; the CPU runtime's test of the generator kernel draws it too.
std::vector<DrawCheckCase> draw_check_sample();

struct DrawCheck {
  bool ok = false;
  std::size_t cases = 0;     // cases drawn and compared
  std::size_t elements = 0;  // elements compared, all cases together
  std::string error;         // what differed (or what failed), empty when ok
};

// Draws the sample on `driver`, compares it with the host twin, frees what it allocated.
DrawCheck check_device_draw(GpuDriver& driver);
// Why the runner refuses to evaluate after `check`; empty when it passed.
std::string draw_check_refusal(const DrawCheck& check);

}  // namespace leap::sandbox::detail
