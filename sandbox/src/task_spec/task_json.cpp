// SPDX-License-Identifier: Apache-2.0
// A TaskSpec written back as task.json, every field explicit and the reference inline, so that
// parse_task(task_to_json(t)) gives t again (what `leap-sandbox tasks --json` prints).
#include "leap/sandbox/task.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "task_spec/task_spec_rules.hpp"

namespace leap::sandbox {

using detail::task_spec::k_dtypes;
using nlohmann::json;

namespace {

// The library fields that are given (task_library.hpp); a field not given stays out.
void add_library_fields(const TaskLibraryInfo& lib, json& doc) {
  if (!lib.category.empty()) doc["category"] = lib.category;
  if (lib.tier != 0) doc["tier"] = lib.tier;
  if (!lib.bytes.empty()) doc["bytes"] = lib.bytes;
  if (!lib.flops.empty()) doc["flops"] = lib.flops;
  if (lib.provenance) {
    doc["provenance"] = {{"origin", lib.provenance->origin},
                         {"semantics", lib.provenance->semantics},
                         {"licence", lib.provenance->licence}};
  }
  if (!lib.split.empty()) doc["split"] = lib.split;
  if (!lib.tolerance_reason.empty()) doc["tolerance_reason"] = lib.tolerance_reason;
  if (!lib.oracle_file.empty()) doc["oracle_file"] = lib.oracle_file;
  if (lib.compile_cpu_seconds != 0) doc["compile_cpu_seconds"] = lib.compile_cpu_seconds;
}

}  // namespace

std::string task_to_json(const TaskSpec& t, int indent) {
  json params = json::array();
  for (const Param& p : t.params) {
    json q = {
        {"name", p.name}, {"kind", p.kind == ParamKind::buffer ? "buffer" : "scalar"}, {"dtype", to_string(p.dtype)}};
    if (p.kind == ParamKind::buffer) {
      q["role"] = to_string(p.role);
      q["shape"] = p.shape;
      if (p.role != Role::out) {
        const Generator& g = p.generator;
        json gj = {{"kind", to_string(g.kind)}};
        if (g.kind == GeneratorKind::randint) {
          gj["low"] = g.low_expr.empty() ? json(g.a) : json(g.low_expr);
          gj["high"] = g.high_expr.empty() ? json(g.b) : json(g.high_expr);
        } else if (g.kind == GeneratorKind::uniform) {
          gj.update({{"low", g.a}, {"high", g.b}});
        } else if (g.kind == GeneratorKind::normal || g.kind == GeneratorKind::rademacher) {
          gj.update({{"mean", g.a}, {"std", g.b}});
        } else if (g.kind == GeneratorKind::student_t) {
          gj.update({{"mean", g.a}, {"scale", g.b}});
        } else if (g.kind == GeneratorKind::constant) {
          gj["value"] = g.a;
        }
        if (g.special) gj["special"] = true;
        if (g.random_scale) gj["random_scale"] = true;
        q["generator"] = gj;
      }
    } else {
      q["value"] = p.value;
    }
    params.push_back(std::move(q));
  }
  json tol = json::object();
  for (DType d : k_dtypes)
    tol[std::string(to_string(d))] = {{"atol", t.tolerance_for(d).atol}, {"rtol", t.tolerance_for(d).rtol}};
  json checks = json::array();
  for (const Sizes& s : t.check_sizes) checks.push_back(s);
  json doc = {{"name", t.name},
              {"description", t.description},
              {"entry", t.entry},
              {"params", params},
              {"sizes", t.sizes},
              {"check_sizes", checks},
              {"launch", {{"grid", t.launch.grid}, {"block", t.launch.block}, {"shared_bytes", t.launch.shared_bytes}}},
              {"candidate_launch",
               {{"allowed", t.candidate_launch.allowed},
                {"max_kernels", t.candidate_launch.max_kernels},
                {"max_threads_per_block", t.candidate_launch.max_threads_per_block},
                {"max_shared_bytes", t.candidate_launch.max_shared_bytes},
                {"max_scratch_bytes", t.candidate_launch.max_scratch_bytes}}},
              {"reference", t.reference_source},
              {"tolerance", tol},
              {"trials", t.trials},
              {"timing",
               {{"warmup", t.timing.warmup},
                {"min_reps", t.timing.min_reps},
                {"max_reps", t.timing.max_reps},
                {"target_spread", t.timing.target_spread},
                {"budget_ms", t.timing.budget_ms}}},
              {"time_limit_ms", t.time_limit_ms}};
  add_library_fields(t.library, doc);
  return doc.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace leap::sandbox
