// SPDX-License-Identifier: Apache-2.0
// The checks a TaskSpec passes before anything is compiled or run for it: names, parameters and their
// sizes at every check set, generators that draw fresh inputs, launches within the device's limits,
// the candidate-launch policy, tolerances, trials and timing. Each refusal names the field and the fix.
#include "leap/sandbox/task.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/identifier.hpp"
#include "task_spec/size_expr.hpp"
#include "task_spec/task_spec_rules.hpp"

namespace leap::sandbox {

using namespace detail::task_spec;

namespace {

template <class Names>
bool one_of(const Names& names, std::string_view v) {
  for (std::string_view n : names)
    if (n == v) return true;
  return false;
}

template <class Names>
std::string listed(const Names& names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

// The library fields that are given hold values the library knows; bytes and flops are size
// expressions that evaluate to a non-negative number at every size set.
void validate_library_fields(const TaskSpec& t, const std::vector<const Sizes*>& all_sizes) {
  const std::string& n = t.name;
  const TaskLibraryInfo& lib = t.library;
  if (!lib.category.empty() && !one_of(k_task_categories, lib.category))
    fail(n, "category", "unknown category \"" + lib.category + "\" (" + listed(k_task_categories) + ")");
  if (lib.tier != 0 && (lib.tier < 1 || lib.tier > 3)) fail(n, "tier", "expected 1, 2 or 3");
  for (const auto& [key, expr] : {std::pair{"bytes", &lib.bytes}, std::pair{"flops", &lib.flops}}) {
    if (expr->empty()) continue;
    for (const Sizes* s : all_sizes) {
      std::int64_t v = 0;
      try {
        v = eval_size_expr(*expr, *s);
      } catch (const std::invalid_argument& e) {
        fail(n, key, e.what());
      }
      if (v < 0) fail(n, key, "\"" + *expr + "\" is negative at sizes " + sizes_text(*s));
    }
  }
  if (!lib.split.empty() && !one_of(k_task_splits, lib.split))
    fail(n, "split", "unknown split \"" + lib.split + "\" (" + listed(k_task_splits) + ")");
  if (lib.provenance) {
    if (!one_of(k_task_origins, lib.provenance->origin))
      fail(n, "provenance.origin",
           "unknown origin \"" + lib.provenance->origin + "\" (" + listed(k_task_origins) + ")");
    if (lib.provenance->semantics.empty()) fail(n, "provenance.semantics", "empty: name the formula followed");
    if (!one_of(k_task_licences, lib.provenance->licence))
      fail(n, "provenance.licence",
           "unknown licence \"" + lib.provenance->licence + "\" (" + listed(k_task_licences) + ")");
  }
  if (lib.compile_cpu_seconds != 0 &&
      (lib.compile_cpu_seconds < 1 || lib.compile_cpu_seconds > k_max_compile_cpu_seconds))
    fail(n, "compile_cpu_seconds", "expected [1, " + std::to_string(k_max_compile_cpu_seconds) + "]");
}

}  // namespace

void require_library_fields(const TaskSpec& t) {
  const std::string& n = t.name;
  const TaskLibraryInfo& lib = t.library;
  const std::string need = " (required of a built-in task; see docs/task-json.md#library-fields)";
  if (lib.category.empty()) fail(n, "category", "missing: one of " + listed(k_task_categories) + need);
  if (lib.tier == 0) fail(n, "tier", "missing: 1, 2 or 3" + need);
  if (lib.bytes.empty()) fail(n, "bytes", "missing: a size expression of the bytes moved" + need);
  if (lib.flops.empty()) fail(n, "flops", "missing: a size expression of the operations (0 for data movement)" + need);
  if (!lib.provenance) fail(n, "provenance", "missing: {\"origin\", \"semantics\", \"licence\"}" + need);
  if (lib.split.empty()) fail(n, "split", "missing: \"train\" or \"holdout\"" + need);
  if (lib.tolerance_reason.empty()) fail(n, "tolerance_reason", "missing: one sentence on why" + need);
  if (lib.oracle_file.empty()) fail(n, "oracle_file", "missing: \"oracle.cpp\"" + need);
}

void validate(const TaskSpec& t) {
  const std::string& n = t.name;
  if (!is_task_name(n)) fail(n, "name", "expected [a-z0-9_]+ of at most 64 characters, got \"" + n + "\"");
  if (!detail::is_identifier(t.entry, k_max_task_name_length))
    fail(n, "entry", "not a C identifier: \"" + t.entry + "\"");
  if (t.params.empty()) fail(n, "params", "empty");
  if (t.sizes.empty()) fail(n, "sizes", "empty");
  std::set<std::string> names;
  bool has_output = false;
  std::vector<const Sizes*> all_sizes{&t.sizes};
  for (const Sizes& s : t.check_sizes) all_sizes.push_back(&s);
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const Param& p = t.params[i];
    const std::string f = "params[" + std::to_string(i) + "]";
    if (!detail::is_identifier(p.name, k_max_task_name_length))
      fail(n, f + ".name", "not a C identifier: \"" + p.name + "\"");
    if (!names.insert(p.name).second) fail(n, f + ".name", "duplicate name \"" + p.name + "\"");
    if (p.kind == ParamKind::scalar) {
      if (p.dtype != DType::float32 && p.dtype != DType::int32)
        fail(n, f + ".dtype", "a scalar is float32 or int32, got \"" + std::string(to_string(p.dtype)) + "\"");
      for (const Sizes* s : all_sizes) {
        try {
          const std::int64_t v = eval_size_expr(p.value, *s);
          if (p.dtype == DType::int32 && (v < INT32_MIN || v > INT32_MAX))
            fail(n, f + ".value", "\"" + p.value + "\" does not fit int32");
        } catch (const std::invalid_argument& e) {
          if (p.dtype == DType::int32) fail(n, f + ".value", e.what());
          char* end = nullptr;
          const double d = std::strtod(p.value.c_str(), &end);
          if (end == p.value.c_str() || *end != '\0' || !std::isfinite(d))
            fail(n, f + ".value", "neither a number nor a size expression: \"" + p.value + "\"");
        }
      }
      continue;
    }
    has_output = has_output || p.role != Role::in;
    for (const Sizes* s : all_sizes) {
      try {
        if (element_count(p, *s) * dtype_size(p.dtype) > (std::size_t{4} << 30))
          fail(n, f + ".shape", "larger than 4 GiB");
      } catch (const TaskError& e) {
        fail(n, f + ".shape", e.what());
      }
    }
    if (p.role != Role::out) {
      for (const Sizes* s : all_sizes) {  // bounds that are size expressions, resolved at each size set
        Generator g;
        try {
          g = generator_at(p, *s);
        } catch (const TaskError& e) {
          fail(n, f + ".generator", e.what());
        }
        if (!std::isfinite(g.a) || !std::isfinite(g.b)) fail(n, f + ".generator", "parameters must be finite");
        if ((g.kind == GeneratorKind::uniform && !(g.a < g.b)) || (g.kind == GeneratorKind::randint && !(g.a <= g.b)))
          fail(n, f + ".generator",
               "low must be below high" + (p.generator.low_expr.empty() && p.generator.high_expr.empty()
                                               ? std::string()
                                               : " (at sizes " + sizes_text(*s) + ": low " + std::to_string(g.a) +
                                                     ", high " + std::to_string(g.b) + ")"));
      }
      const Generator& g = p.generator;
      if ((g.kind == GeneratorKind::normal || g.kind == GeneratorKind::rademacher) && !(g.b > 0))
        fail(n, f + ".generator.std", "must be positive");
      if (g.kind == GeneratorKind::student_t && !(g.b > 0)) fail(n, f + ".generator.scale", "must be positive");
      if (g.random_scale && (g.kind == GeneratorKind::randint || g.kind == GeneratorKind::zeros))
        fail(n, f + ".generator.random_scale",
             "scales a distribution's location and spread: uniform, normal, rademacher or student_t");
      // Every timed run draws its inputs afresh; these two would draw the same ones every time, and a
      // kernel could keep its answer from one run for the next.
      if (g.kind == GeneratorKind::constant || g.kind == GeneratorKind::arange) {
        fail(n, f + ".generator.kind",
             "\"" + std::string(to_string(g.kind)) +
                 "\" gives the same input on every timed run, so a kernel could reuse its "
                 "last answer; draw it with uniform, normal, randint, rademacher or student_t");
      }
      if (g.special && (p.dtype == DType::int32 || p.dtype == DType::int8))
        fail(n, f + ".generator.special", "NaN, infinities, subnormals and -0 need a float dtype");
    }
  }
  if (!has_output) fail(n, "params", "no buffer with role out or inout");
  for (const Sizes* s : all_sizes) {
    try {
      (void)resolve_launch(t, *s);
    } catch (const TaskError& e) {
      fail(n, "launch", e.what());
    }
  }
  const LaunchPolicy& pol = t.candidate_launch;
  if (pol.max_kernels < 1 || pol.max_kernels > k_max_plan_kernels) {
    fail(n, "candidate_launch.max_kernels",
         "expected [1, " + std::to_string(k_max_plan_kernels) + "], got " + std::to_string(pol.max_kernels));
  }
  if (pol.max_threads_per_block < 1 || pol.max_threads_per_block > k_max_threads_per_block) {
    fail(n, "candidate_launch.max_threads_per_block",
         "expected [1, " + std::to_string(k_max_threads_per_block) + "], got " +
             std::to_string(pol.max_threads_per_block));
  }
  if (pol.max_shared_bytes > k_max_plan_shared_bytes) {
    fail(n, "candidate_launch.max_shared_bytes",
         "expected at most " + std::to_string(k_max_plan_shared_bytes) + ", got " +
             std::to_string(pol.max_shared_bytes));
  }
  if (pol.max_scratch_bytes > k_max_plan_scratch_bytes) {
    fail(n, "candidate_launch.max_scratch_bytes",
         "expected at most " + std::to_string(k_max_plan_scratch_bytes) + ", got " +
             std::to_string(pol.max_scratch_bytes));
  }
  if (t.reference_source.empty()) fail(n, "reference", "empty");
  for (DType d : k_dtypes) {
    const Tolerance& tol = t.tolerance_for(d);
    if (!(tol.atol >= 0 && tol.rtol >= 0) || !std::isfinite(tol.atol) || !std::isfinite(tol.rtol)) {
      fail(n, "tolerance." + std::string(to_string(d)), "atol and rtol must be finite and non-negative");
    }
  }
  if (t.trials < 1 || t.trials > 100) fail(n, "trials", "expected [1, 100], got " + std::to_string(t.trials));
  if (t.time_limit_ms < 100) fail(n, "time_limit_ms", "expected at least 100, got " + std::to_string(t.time_limit_ms));
  const TimingSettings& tm = t.timing;
  if (tm.min_reps < 1 || tm.max_reps < tm.min_reps) fail(n, "timing", "need 1 <= min_reps <= max_reps");
  if (!(tm.target_spread >= 0) || !std::isfinite(tm.target_spread))
    fail(n, "timing.target_spread", "must be finite and non-negative");
  if (tm.warmup < 0 || tm.budget_ms < 1) fail(n, "timing", "warmup must be >= 0 and budget_ms >= 1");
  validate_library_fields(t, all_sizes);
}

}  // namespace leap::sandbox
