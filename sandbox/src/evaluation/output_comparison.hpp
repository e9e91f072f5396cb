// SPDX-License-Identifier: Apache-2.0
// The comparison of a candidate's output with the reference's, element by element within the task's
// tolerance, and the line of feedback that describes it. Plain host code, tested without a GPU; the
// GPU runner uses exactly these (device_compare.hpp does the same on the device). Internal.
#pragma once

#include <cstddef>
#include <string>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

struct Comparison {
  bool ok = true;
  std::size_t mismatches = 0;   // elements outside the tolerance (NaN where the reference is not, too)
  std::size_t first_index = 0;  // valid when !ok
  double first_expected = 0.0;
  double first_actual = 0.0;
  // Over every pair without a NaN: |a - e|, and |a - e| / max(|e|, tiny). An infinity against a
  // different value (a finite one, or the other infinity) is an infinite error, so a summary never says
  // "max abs err 0" of outputs that differ.
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  std::size_t nan_count = 0;  // NaNs in the candidate's output where the reference has none
  std::size_t inf_count = 0;  // elements where an infinity (either side's) meets a different value
};

// Element-wise: passes when |a - e| <= atol + rtol * |e|; NaN matches only NaN, infinities only
// the same infinity.
Comparison compare(DType dtype, const void* actual, const void* expected, std::size_t n, Tolerance tol) noexcept;

// "out: 3 of 1000003 elements differ (max abs err 0.42, max rel err 1.0); first at [1000000]:
// expected 0.1234, got nan" - the line feedback uses; infinities that do not match are counted in it
// ("max abs err inf, ...), 2 infinite where the other side is not the same infinity").
std::string describe(const Comparison& c, const std::string& buffer, std::size_t n);

}  // namespace leap::sandbox
