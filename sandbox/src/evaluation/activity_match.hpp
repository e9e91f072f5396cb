// SPDX-License-Identifier: Apache-2.0
// Which CUPTI kernel records belong to which timed run. Where any record carries an external
// correlation id, a run's records are those with its id, and nothing else stands in for a missing
// one; where none does, they are the records that started inside its window. Either way the
// harness's own kernels (input generator, cache flush, comparison), launched outside every window
// and without an id, belong to no run. Used by the harness to time runs and by the real driver to
// know when a harvest is complete. Internal; pure functions, tested directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "evaluation/gpu_driver.hpp"

namespace leap::sandbox::detail {

// True when any record carries an external id: runs are then matched by id alone.
bool records_carry_ids(const std::vector<KernelActivity>& records);

struct RunRecords {
  std::size_t records = 0;        // kernel records found for the run
  std::uint64_t first_start = 0;  // earliest start and latest end among them (0, 0 when none)
  std::uint64_t last_end = 0;
  // The run's duration by CUPTI: first start to last end, when every kernel of its plan has a record.
  bool complete(const RunWindow& run) const { return records >= run.kernels && last_end > first_start; }
  double ms() const { return static_cast<double>(last_end - first_start) * 1e-6; }
};

RunRecords records_of_run(const std::vector<KernelActivity>& records, const RunWindow& run, bool by_id);

// How many of the runs' plan kernels have their record among `records` (at most run.kernels each).
std::size_t plan_records_delivered(const std::vector<KernelActivity>& records, const std::vector<RunWindow>& runs);

}  // namespace leap::sandbox::detail
