// SPDX-License-Identifier: Apache-2.0
#include "evaluation/timing_floor.hpp"

namespace leap::sandbox::detail {

std::uint64_t bytes_read_at_least(const TaskSpec& task, const Sizes& sizes) {
  std::uint64_t bytes = 0;
  for (const Param& p : task.params) {
    if (p.kind != ParamKind::buffer || p.role == Role::out || p.generator.kind == GeneratorKind::zeros) continue;
    bytes += static_cast<std::uint64_t>(element_count(p, sizes)) * dtype_size(p.dtype);
  }
  return bytes;
}

std::optional<TimingFloor> timing_floor(std::uint64_t bytes, double bandwidth) {
  if (!(bandwidth > 0.0)) return std::nullopt;
  TimingFloor f;
  f.bytes = bytes;
  f.bandwidth = bandwidth;
  f.floor_ms = static_cast<double>(bytes) / (bandwidth * k_floor_headroom) * 1e3;
  return f;
}

}  // namespace leap::sandbox::detail
