// SPDX-License-Identifier: Apache-2.0
#include "evaluation/output_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "evaluation/element_values.hpp"

namespace leap::sandbox {
namespace {

std::string num(double v) {
  std::ostringstream os;
  os.precision(7);
  os << v;
  return os.str();
}

}  // namespace

Comparison compare(DType dtype, const void* actual, const void* expected, std::size_t n, Tolerance tol) noexcept {
  Comparison c;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = element_value(dtype, actual, i), e = element_value(dtype, expected, i);
    bool bad = false;
    if (std::isnan(e) || std::isnan(a)) {
      bad = std::isnan(e) != std::isnan(a);
      if (std::isnan(a) && !std::isnan(e)) ++c.nan_count;
    } else if (std::isinf(e) || std::isinf(a)) {
      bad = a != e;
      if (bad) {  // |a - e| is infinite, and so is the relative error
        c.max_abs_error = c.max_rel_error = std::numeric_limits<double>::infinity();
        ++c.inf_count;
      }
    } else {
      const double err = std::fabs(a - e);
      const double rel = err / std::max(std::fabs(e), std::numeric_limits<double>::min());
      c.max_abs_error = std::max(c.max_abs_error, err);
      c.max_rel_error = std::max(c.max_rel_error, rel);
      bad = err > tol.atol + tol.rtol * std::fabs(e);
    }
    if (bad) {
      if (c.ok) {
        c.first_index = i;
        c.first_expected = e;
        c.first_actual = a;
      }
      c.ok = false;
      ++c.mismatches;
    }
  }
  return c;
}

std::string describe(const Comparison& c, const std::string& buffer, std::size_t n) {
  if (c.ok) return buffer + ": all " + std::to_string(n) + " elements match (max abs err " + num(c.max_abs_error) + ")";
  std::string s = buffer + ": " + std::to_string(c.mismatches) + " of " + std::to_string(n) +
                  " elements differ (max abs err " + num(c.max_abs_error) + ", max rel err " + num(c.max_rel_error) +
                  ")";
  if (c.nan_count > 0) s += ", " + std::to_string(c.nan_count) + " NaN (never written?)";
  if (c.inf_count > 0)
    s += ", " + std::to_string(c.inf_count) + " infinite where the other side is not the same infinity";
  s += "; first at [" + std::to_string(c.first_index) + "]: expected " + num(c.first_expected) + ", got " +
       num(c.first_actual);
  return s;
}

}  // namespace leap::sandbox
