// SPDX-License-Identifier: Apache-2.0
#include "verify/trial.hpp"

#include <cstdlib>

#include "evaluation/correctness_inputs.hpp"
#include "task_spec/size_expr.hpp"

namespace leap::sandbox::verify {

bool is_input(const Param& p) noexcept { return p.kind == ParamKind::buffer && p.role != Role::out; }
bool is_output(const Param& p) noexcept { return p.kind == ParamKind::buffer && p.role != Role::in; }

namespace {

// A scalar as the kernel receives it: an int32 size expression, or a float32 number (or expression).
double scalar_value(const Param& p, const Sizes& sizes) {
  if (p.dtype == DType::int32) return static_cast<double>(eval_size_expr(p.value, sizes));
  try {
    return static_cast<double>(static_cast<float>(eval_size_expr(p.value, sizes)));
  } catch (const std::invalid_argument&) {
    return static_cast<double>(std::strtof(p.value.c_str(), nullptr));
  }
}

}  // namespace

Trial draw_trial(const TaskSpec& task, const Sizes& sizes, std::uint64_t seed) {
  Trial t;
  t.sizes = sizes;
  t.seed = seed;
  const std::size_t np = task.params.size();
  t.buffers.resize(np);
  t.scalars.assign(np, 0.0);
  t.counts.assign(np, 0);
  for (std::size_t i = 0; i < np; ++i) {
    const Param& p = task.params[i];
    if (p.kind == ParamKind::scalar) {
      t.scalars[i] = scalar_value(p, sizes);
      continue;
    }
    t.counts[i] = element_count(p, sizes);
    t.buffers[i].assign(t.counts[i] * dtype_size(p.dtype), 0);
    if (is_input(p)) draw_input(p, sizes, trial_seed(seed, i), t.buffers[i].data(), t.counts[i]);
  }
  return t;
}

void redraw_buffer(const TaskSpec& task, Trial& trial, std::size_t param, std::uint64_t seed) {
  draw_input(task.params[param], trial.sizes, trial_seed(seed, param), trial.buffers[param].data(),
             trial.counts[param]);
}

}  // namespace leap::sandbox::verify
