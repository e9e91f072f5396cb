// SPDX-License-Identifier: Apache-2.0
#include "verify/dump_trial.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "evaluation/correctness_inputs.hpp"
#include "evaluation/element_values.hpp"
#include "task_spec/size_expr.hpp"
#include "verify/kernel_run.hpp"
#include "verify/npy_file.hpp"
#include "verify/oracle_run.hpp"
#include "verify/reduced_sizes.hpp"
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::int64_t> shape_of(const Param& p, const Sizes& sizes) {
  std::vector<std::int64_t> shape;
  for (const std::string& e : p.shape) shape.push_back(eval_size_expr(e, sizes));
  return shape;
}

// The buffer as numpy holds it: bfloat16 widened to float32 (exact), the others as they are.
json write_buffer(const fs::path& dir, const std::string& file, const Param& p, const Sizes& sizes, const Bytes& data,
                  std::size_t count) {
  const fs::path path = dir / file;
  const std::vector<std::int64_t> shape = shape_of(p, sizes);
  std::string descr;
  switch (p.dtype) {
    case DType::float32: descr = "<f4"; break;
    case DType::float16: descr = "<f2"; break;
    case DType::int32: descr = "<i4"; break;
    case DType::int8: descr = "|i1"; break;
    case DType::bfloat16: descr = "<f4"; break;
  }
  if (p.dtype == DType::bfloat16) {
    std::vector<float> wide(count);
    for (std::size_t i = 0; i < count; ++i) wide[i] = static_cast<float>(element_value(p.dtype, data.data(), i));
    write_npy(path, descr, shape, wide.data(), wide.size() * sizeof(float));
  } else {
    write_npy(path, descr, shape, data.data(), data.size());
  }
  return {{"file", file}, {"dtype", std::string(to_string(p.dtype))}, {"numpy", descr}, {"shape", shape}};
}

std::pair<std::string, Sizes> size_set_of(const TaskSpec& t, std::size_t n) {
  if (n < t.check_sizes.size())
    return {"check_sizes[" + std::to_string(n) + "] " + sizes_text(t.check_sizes[n]), t.check_sizes[n]};
  const Sizes reduced = reduced_timing_sizes(t);
  return {"timing (reduced) " + sizes_text(reduced), reduced};
}

std::string oracle_verdict(const VerifyTarget& target, ModuleCache& cache, const Trial& trial,
                           const std::vector<Bytes>& outputs) {
  if (target.oracle_source.empty()) return "no oracle: the task has no oracle_file";
  const BuiltModule m = cache.oracle_module(target.oracle_source, target.spec.library.oracle_file);
  if (!m.ok) return "the oracle does not compile: " + m.log;
  const OracleRun o = run_oracle(cache.load_oracle(m.path), target.spec, trial);
  if (!o.ok()) return "the oracle failed: " + o.failure;
  const std::string diff = first_difference(target.spec, outputs, o.outputs, trial.counts);
  return diff.empty() ? "agrees" : diff;
}

}  // namespace

DumpResult dump_trial(const VerifyTarget& target, ModuleCache& cache, std::size_t size_set, std::uint64_t seed,
                      const fs::path& dir) {
  const TaskSpec& t = target.spec;
  DumpResult r;
  if (size_set > t.check_sizes.size()) {
    r.error = "task '" + t.name + "' has size sets 0 to " + std::to_string(t.check_sizes.size()) + " (" +
              std::to_string(t.check_sizes.size()) + " is the reduced timing size), not " + std::to_string(size_set);
    return r;
  }
  Sizes sizes;
  std::tie(r.label, sizes) = size_set_of(t, size_set);
  const Trial trial = draw_trial(t, sizes, trial_seed(seed, size_set));

  const BuiltModule m = cache.kernel_module(t.reference_source, "reference.cu");
  if (!m.ok) {
    r.error = "the reference does not compile for the CPU runtime: " + m.log;
    return r;
  }
  const KernelRun run = run_kernels(cache.load_kernels(m.path), plan_of(t, t.reference_source), t, trial,
                                    cpu_runtime::Schedule::in_order(), trial.seed);
  if (!run.ok()) {
    r.error = "the reference failed at " + r.label + ": " + run.failure;
    return r;
  }
  r.oracle = oracle_verdict(target, cache, trial, run.outputs);

  fs::create_directories(dir / "inputs");
  fs::create_directories(dir / "outputs");
  json buffers = json::array();
  json scalars = json::object();
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const Param& p = t.params[i];
    if (p.kind == ParamKind::scalar) {
      scalars[p.name] = trial.scalars[i];
      continue;
    }
    json b = {{"name", p.name}, {"role", std::string(to_string(p.role))}};
    if (is_input(p))
      b["input"] = write_buffer(dir, "inputs/" + p.name + ".npy", p, sizes, trial.buffers[i], trial.counts[i]);
    if (is_output(p))
      b["output"] = write_buffer(dir, "outputs/" + p.name + ".npy", p, sizes, run.outputs[i], trial.counts[i]);
    buffers.push_back(std::move(b));
  }
  const json meta = {{"task", t.name},
                     {"size_set", size_set},
                     {"label", r.label},
                     {"sizes", sizes},
                     {"seed", seed},
                     {"trial_seed", trial.seed},
                     {"scalars", scalars},
                     {"buffers", buffers},
                     {"outputs_from", "the reference on the CPU runtime, threads in order"},
                     {"oracle", r.oracle}};
  std::ofstream(dir / "trial.json") << meta.dump(2) << "\n";
  return r;
}

}  // namespace leap::sandbox::verify
