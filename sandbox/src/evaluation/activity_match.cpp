// SPDX-License-Identifier: Apache-2.0
#include "evaluation/activity_match.hpp"

#include <algorithm>

namespace leap::sandbox::detail {

bool records_carry_ids(const std::vector<KernelActivity>& records) {
  return std::any_of(records.begin(), records.end(), [](const KernelActivity& k) { return k.external_id != 0; });
}

RunRecords records_of_run(const std::vector<KernelActivity>& records, const RunWindow& run, bool by_id) {
  RunRecords r;
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (const KernelActivity& k : records) {
    const bool in_run =
        by_id ? k.external_id != 0 && k.external_id == run.external_id : k.start_ns >= run.t0 && k.start_ns <= run.t1;
    if (!in_run) continue;
    lo = std::min(lo, k.start_ns);
    hi = std::max(hi, k.end_ns);
    ++r.records;
  }
  if (r.records > 0) {
    r.first_start = lo;
    r.last_end = hi;
  }
  return r;
}

std::size_t plan_records_delivered(const std::vector<KernelActivity>& records, const std::vector<RunWindow>& runs) {
  const bool by_id = records_carry_ids(records);
  std::size_t n = 0;
  for (const RunWindow& run : runs) n += std::min(records_of_run(records, run, by_id).records, run.kernels);
  return n;
}

}  // namespace leap::sandbox::detail
