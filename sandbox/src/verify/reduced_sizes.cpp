// SPDX-License-Identifier: Apache-2.0
#include "verify/reduced_sizes.hpp"

#include <set>
#include <string>

#include "task_spec/size_expr.hpp"

namespace leap::sandbox::verify {

namespace {

// What a size set costs; throws TaskError where the task is not valid at it.
struct Cost {
  std::int64_t bytes = 0, flops = 0, outputs = 0, threads = 0;
};

Cost cost_at(const TaskSpec& task, const Sizes& s) {
  Cost c;
  std::int64_t buffer_bytes = 0;
  for (const Param& p : task.params) {
    if (p.kind != ParamKind::buffer) continue;
    const auto n = static_cast<std::int64_t>(element_count(p, s));
    buffer_bytes += n * static_cast<std::int64_t>(dtype_size(p.dtype));
    if (p.role != Role::in) c.outputs += n;
  }
  c.bytes = task.library.bytes.empty() ? buffer_bytes : eval_size_expr(task.library.bytes, s);
  c.flops = task.library.flops.empty() ? 0 : eval_size_expr(task.library.flops, s);
  const ResolvedLaunch l = resolve_launch(task, s);
  c.threads = std::int64_t{1};
  for (int d = 0; d < 3; ++d) c.threads *= std::int64_t{l.grid[d]} * l.block[d];
  for (const Param& p : task.params) {
    if (p.kind == ParamKind::scalar && p.dtype == DType::int32) {
      const std::int64_t v = eval_size_expr(p.value, s);
      if (v < INT32_MIN || v > INT32_MAX) throw TaskError("scalar out of range");
    }
  }
  return c;
}

bool within(const Cost& c, const ReductionCaps& caps) {
  return c.bytes <= caps.bytes && c.flops <= caps.flops && c.outputs <= caps.output_elements &&
         c.threads <= caps.threads;
}

bool valid(const TaskSpec& task, const Sizes& s) {
  try {
    (void)cost_at(task, s);
    return true;
  } catch (const std::invalid_argument&) {  // TaskError, a size expression's error
    return false;
  }
}

}  // namespace

Sizes reduced_timing_sizes(const TaskSpec& task, const ReductionCaps& caps) {
  Sizes s = task.sizes;
  std::set<std::string, std::less<>> kept;  // sizes whose halving made the task invalid
  for (int step = 0; step < 4096; ++step) {
    if (within(cost_at(task, s), caps)) break;
    std::string largest;
    for (const auto& [name, v] : s)
      if (!kept.contains(name) && v > 1 && (largest.empty() || v > s.at(largest))) largest = name;
    if (largest.empty()) break;  // nothing left to halve: the smallest valid copy
    const std::int64_t before = s[largest];
    s[largest] = before / 2;
    if (!valid(task, s)) {
      s[largest] = before;
      kept.insert(largest);
    }
  }
  for (auto& [name, v] : s) {  // ragged: odd sizes where the task allows
    if (v > 2 && v % 2 == 0) {
      --v;
      if (!valid(task, s)) ++v;
    }
  }
  return s;
}

}  // namespace leap::sandbox::verify
