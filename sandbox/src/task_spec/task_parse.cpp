// SPDX-License-Identifier: Apache-2.0
// task.json read into a TaskSpec, one section at a time; every message names the task and the field
// (docs/task-json.md is the format's reference). The files a spec names are read by the resolver it is
// given (task_file.cpp), and the spec read is checked by validate (task_check.cpp) before it is returned.
#include "leap/sandbox/task.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/identifier.hpp"
#include "common/json_keys.hpp"
#include "task_spec/task_spec_rules.hpp"
#include "common/bounded_json.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;
using namespace detail::task_spec;

// Reads one spec; every accessor names the field it reads.
struct Reader {
  std::string task;

  void only_keys(const json& obj, const std::string& field, std::initializer_list<std::string_view> keys) const {
    if (const std::optional<std::string> key = detail::first_unknown_key(obj, keys)) {
      fail(task, field.empty() ? *key : field + "." + *key, "unknown key");
    }
  }
  const json& object(const json& v, const std::string& field) const {
    if (!v.is_object()) fail(task, field, "expected an object, got " + shown(v));
    return v;
  }
  std::string string(const json& v, const std::string& field) const {
    if (!v.is_string()) fail(task, field, "expected a string, got " + shown(v));
    return v.get<std::string>();
  }
  // A size expression: a string, or an integer written as a number.
  std::string expression(const json& v, const std::string& field) const {
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (v.is_string()) return v.get<std::string>();
    fail(task, field, "expected an integer or an expression string, got " + shown(v));
  }
  double number(const json& v, const std::string& field) const {
    if (!v.is_number()) fail(task, field, "expected a number, got " + shown(v));
    return v.get<double>();
  }
  int integer(const json& v, const std::string& field, int lo, int hi) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
      fail(task, field,
           "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + shown(v));
    }
    return static_cast<int>(v.get<std::int64_t>());
  }
  Sizes sizes(const json& v, const std::string& field) const {
    object(v, field);
    Sizes out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string f = field + "." + it.key();
      if (!detail::is_identifier(it.key(), k_max_task_name_length)) fail(task, f, "not an identifier");
      if (!it->is_number_integer() || it->get<std::int64_t>() < 1)
        fail(task, f, "expected a positive integer, got " + shown(*it));
      out[it.key()] = it->get<std::int64_t>();
    }
    return out;
  }
  DType dtype(const json& v, const std::string& field) const {
    const std::string s = string(v, field);
    const std::optional<DType> d = dtype_from_string(s);
    if (!d) fail(task, field, "unknown dtype " + shown(v) + " (float32, float16, bfloat16, int32 or int8)");
    return *d;
  }
  // A kind's defaults are the same whether the generator is written as a bare string ("normal") or as
  // an object ({"kind": "normal"}); the object's keys then override them.
  Generator generator_defaults(const std::string& kind, const std::string& field) const {
    const std::optional<GeneratorKind> known = generator_kind_from_string(kind);
    if (!known)
      fail(task, field,
           "unknown generator \"" + kind +
               "\" (uniform, normal, randint, rademacher, student_t, constant, zeros, arange)");
    Generator g;
    g.kind = *known;
    if (g.kind == GeneratorKind::normal || g.kind == GeneratorKind::rademacher || g.kind == GeneratorKind::student_t) {
      g.a = 0.0;  // mean
      g.b = 1.0;  // std (scale for student_t)
    } else if (g.kind == GeneratorKind::randint) {
      g.a = -100;
      g.b = 100;
    } else if (g.kind == GeneratorKind::constant) {
      g.a = 0.0;  // value
    }
    return g;
  }
  Generator generator(const json& v, const std::string& field) const {
    if (v.is_string()) return generator_defaults(v.get<std::string>(), field + ".kind");
    object(v, field);
    only_keys(v, field, {"kind", "low", "high", "mean", "std", "scale", "value", "special", "random_scale"});
    if (!v.contains("kind")) fail(task, field + ".kind", "missing");
    Generator g = generator_defaults(string(v.at("kind"), field + ".kind"), field + ".kind");
    if (v.contains("special")) {
      if (!v.at("special").is_boolean()) fail(task, field + ".special", "must be true or false");
      g.special = v.at("special").get<bool>();
    }
    if (v.contains("random_scale")) {
      if (!v.at("random_scale").is_boolean()) fail(task, field + ".random_scale", "must be true or false");
      g.random_scale = v.at("random_scale").get<bool>();
    }
    auto get = [&](const char* key, double& out) {
      if (v.contains(key)) out = number(v.at(key), field + "." + key);
    };
    if (g.kind == GeneratorKind::randint) {  // a number, or a size expression over the task's sizes
      auto bound = [&](const char* key, double& out, std::string& expr) {
        if (v.contains(key) && v.at(key).is_string()) expr = string(v.at(key), field + "." + key);
        else get(key, out);
      };
      bound("low", g.a, g.low_expr);
      bound("high", g.b, g.high_expr);
    } else if (g.kind == GeneratorKind::uniform) {
      get("low", g.a);
      get("high", g.b);
    } else if (g.kind == GeneratorKind::normal || g.kind == GeneratorKind::rademacher) {
      get("mean", g.a);
      get("std", g.b);
    } else if (g.kind == GeneratorKind::student_t) {
      get("mean", g.a);
      get("scale", g.b);
    } else if (g.kind == GeneratorKind::constant) {
      get("value", g.a);
    }
    return g;
  }
};

// The bounded JSON document of a spec: its size and nesting are limited before anything is read.
json parse_document(std::string_view json_text) {
  json doc;
  try {
    doc = detail::parse_bounded_json(json_text, {k_max_task_spec_bytes, k_max_task_spec_depth});
  } catch (const detail::JsonLimitError& e) {
    throw TaskError(std::string("task spec: ") + e.what());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number such as 1e400
    throw TaskError(std::string("task spec is not valid JSON: ") + e.what());
  }
  return doc;
}

// One spec being read: the reader that names fields, the document, and the TaskSpec it fills.
struct SpecParse {
  Reader r;
  const json& doc;
  TaskSpec t;

  const json& need(const char* key) const {
    if (!doc.contains(key)) fail(r.task, key, "missing");
    return doc.at(key);
  }

  // A buffer's role, shape and generator.
  void read_buffer(const json& p, const std::string& f, Param& q) const {
    if (p.contains("value")) fail(r.task, f + ".value", "only scalars have a value");
    const std::string role = p.contains("role") ? r.string(p.at("role"), f + ".role") : "in";
    if (role == "in") q.role = Role::in;
    else if (role == "out") q.role = Role::out;
    else if (role == "inout") q.role = Role::inout;
    else fail(r.task, f + ".role", "unknown role " + shown(p.at("role")) + " (in, out or inout)");
    if (!p.contains("shape")) fail(r.task, f + ".shape", "missing");
    const json& shape = p.at("shape");
    if (!shape.is_array() || shape.empty())
      fail(r.task, f + ".shape", "expected a non-empty array, got " + shown(shape));
    for (std::size_t k = 0; k < shape.size(); ++k)
      q.shape.push_back(r.expression(shape[k], f + ".shape[" + std::to_string(k) + "]"));
    if (p.contains("generator")) q.generator = r.generator(p.at("generator"), f + ".generator");
  }

  // A scalar's value: a size expression, or a number kept with all its digits.
  void read_scalar(const json& p, const std::string& f, Param& q) const {
    for (const char* k : {"role", "shape", "generator"}) {
      if (p.contains(k)) fail(r.task, f + "." + k, "only buffers have a " + std::string(k));
    }
    if (!p.contains("value")) fail(r.task, f + ".value", "missing");
    const json& v = p.at("value");
    if (v.is_number_float()) {
      std::ostringstream os;
      os.precision(17);
      os << v.get<double>();
      q.value = os.str();
    } else {
      q.value = r.expression(v, f + ".value");
    }
  }

  Param read_param(const json& params, std::size_t i) const {
    const std::string f = "params[" + std::to_string(i) + "]";
    const json& p = r.object(params[i], f);
    r.only_keys(p, f, {"name", "kind", "dtype", "role", "shape", "generator", "value"});
    Param q;
    if (!p.contains("name")) fail(r.task, f + ".name", "missing");
    q.name = r.string(p.at("name"), f + ".name");
    const std::string kind = p.contains("kind") ? r.string(p.at("kind"), f + ".kind") : "buffer";
    if (kind == "buffer") q.kind = ParamKind::buffer;
    else if (kind == "scalar") q.kind = ParamKind::scalar;
    else fail(r.task, f + ".kind", "unknown kind " + shown(p.at("kind")) + " (buffer or scalar)");
    if (!p.contains("dtype")) fail(r.task, f + ".dtype", "missing");
    q.dtype = r.dtype(p.at("dtype"), f + ".dtype");
    if (q.kind == ParamKind::buffer) {
      read_buffer(p, f, q);
    } else {
      read_scalar(p, f, q);
    }
    return q;
  }

  void read_params() {
    const json& params = need("params");
    if (!params.is_array()) fail(r.task, "params", "expected an array, got " + shown(params));
    if (params.size() > k_max_task_params) {
      fail(r.task, "params",
           std::to_string(params.size()) + " parameters, over the limit of " + std::to_string(k_max_task_params));
    }
    for (std::size_t i = 0; i < params.size(); ++i) t.params.push_back(read_param(params, i));
  }

  void read_check_sizes() {
    if (doc.contains("check_sizes")) {
      const json& cs = doc.at("check_sizes");
      if (!cs.is_array()) fail(r.task, "check_sizes", "expected an array, got " + shown(cs));
      if (cs.size() > k_max_task_check_sizes) {
        fail(r.task, "check_sizes",
             std::to_string(cs.size()) + " size sets, over the limit of " + std::to_string(k_max_task_check_sizes));
      }
      for (std::size_t i = 0; i < cs.size(); ++i) {
        Sizes s = t.sizes;  // a check set overrides some sizes and keeps the rest
        for (const auto& [k, v] : r.sizes(cs[i], "check_sizes[" + std::to_string(i) + "]")) {
          if (!t.sizes.contains(k))
            fail(r.task, "check_sizes[" + std::to_string(i) + "]." + k, "not a size named in sizes");
          s[k] = v;
        }
        t.check_sizes.push_back(std::move(s));
      }
    }
  }

  // The task's own launch: grid and block (1 to 3 dimensions each) and dynamic shared memory.
  void read_launch() {
    const json& launch = r.object(need("launch"), "launch");
    r.only_keys(launch, "launch", {"grid", "block", "shared_bytes"});
    // Grid and block are written alike; each key names the dimensions it fills.
    const std::pair<const char*, std::string*> launch_dims[] = {{"grid", t.launch.grid}, {"block", t.launch.block}};
    for (const auto& [key, out] : launch_dims) {
      const std::string f = std::string("launch.") + key;
      if (!launch.contains(key)) fail(r.task, f, "missing");
      const json& dims = launch.at(key);
      if (dims.is_array()) {
        if (dims.empty() || dims.size() > 3) fail(r.task, f, "expected 1 to 3 dimensions, got " + shown(dims));
        for (std::size_t k = 0; k < dims.size(); ++k) out[k] = r.expression(dims[k], f + "[" + std::to_string(k) + "]");
      } else {
        out[0] = r.expression(dims, f);
      }
    }
    if (launch.contains("shared_bytes"))
      t.launch.shared_bytes = r.expression(launch.at("shared_bytes"), "launch.shared_bytes");
  }

  // What a candidate's own launch plan may do, when the task allows one.
  void read_candidate_launch() {
    if (doc.contains("candidate_launch")) {
      const json& cl = r.object(doc.at("candidate_launch"), "candidate_launch");
      r.only_keys(cl, "candidate_launch",
                  {"allowed", "max_kernels", "max_threads_per_block", "max_shared_bytes", "max_scratch_bytes"});
      LaunchPolicy& pol = t.candidate_launch;
      if (cl.contains("allowed")) {
        if (!cl.at("allowed").is_boolean())
          fail(r.task, "candidate_launch.allowed", "expected true or false, got " + shown(cl.at("allowed")));
        pol.allowed = cl.at("allowed").get<bool>();
      }
      auto bytes = [&](const char* key, std::uint64_t hi, std::uint64_t& out) {
        if (!cl.contains(key)) return;
        const json& v = cl.at(key);
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() > hi) {
          fail(r.task, std::string("candidate_launch.") + key,
               "expected an integer in [0, " + std::to_string(hi) + "], got " + shown(v));
        }
        out = v.get<std::uint64_t>();
      };
      if (cl.contains("max_kernels"))
        pol.max_kernels = r.integer(cl.at("max_kernels"), "candidate_launch.max_kernels", 1, k_max_plan_kernels);
      if (cl.contains("max_threads_per_block")) {
        pol.max_threads_per_block = static_cast<unsigned>(r.integer(
            cl.at("max_threads_per_block"), "candidate_launch.max_threads_per_block", 1, k_max_threads_per_block));
      }
      bytes("max_shared_bytes", k_max_plan_shared_bytes, pol.max_shared_bytes);
      bytes("max_scratch_bytes", k_max_plan_scratch_bytes, pol.max_scratch_bytes);
    }
  }

  // The reference source, inline or from a file the resolver reads.
  void read_reference(const FileResolver& resolve) {
    if (doc.contains("reference") == doc.contains("reference_file"))
      fail(r.task, "reference", "give exactly one of reference and reference_file");
    if (doc.contains("reference")) {
      t.reference_source = r.string(doc.at("reference"), "reference");
    } else {
      const std::string file = r.string(doc.at("reference_file"), "reference_file");
      std::optional<std::string> src;
      try {
        src = resolve ? resolve(file) : std::nullopt;
      } catch (const TaskError& e) {  // a resolver's reason, e.g. a path that leaves the spec's directory
        fail(r.task, "reference_file", e.what());
      }
      if (!src) fail(r.task, "reference_file", "cannot read \"" + file + "\"");
      t.reference_source = std::move(*src);
    }
  }

  // Tolerances per dtype, trials, the time limit and the timing settings.
  void read_checking_and_timing() {
    if (doc.contains("tolerance")) {
      const json& tol = r.object(doc.at("tolerance"), "tolerance");
      for (auto it = tol.begin(); it != tol.end(); ++it) {
        const std::string f = "tolerance." + it.key();
        const std::optional<DType> d = dtype_from_string(it.key());
        if (!d) fail(r.task, f, "unknown dtype \"" + it.key() + "\"");
        r.object(*it, f);
        r.only_keys(*it, f, {"atol", "rtol"});
        Tolerance& out = t.tolerance[static_cast<int>(*d)];
        if (it->contains("atol")) out.atol = r.number(it->at("atol"), f + ".atol");
        if (it->contains("rtol")) out.rtol = r.number(it->at("rtol"), f + ".rtol");
      }
    }
    if (doc.contains("trials")) t.trials = r.integer(doc.at("trials"), "trials", 1, 100);
    if (doc.contains("time_limit_ms"))
      t.time_limit_ms = r.integer(doc.at("time_limit_ms"), "time_limit_ms", 100, 600000);
    if (doc.contains("timing")) {
      const json& tm = r.object(doc.at("timing"), "timing");
      r.only_keys(tm, "timing", {"warmup", "min_reps", "max_reps", "target_spread", "budget_ms"});
      if (tm.contains("warmup")) t.timing.warmup = r.integer(tm.at("warmup"), "timing.warmup", 0, 1000);
      if (tm.contains("min_reps")) t.timing.min_reps = r.integer(tm.at("min_reps"), "timing.min_reps", 1, 100000);
      if (tm.contains("max_reps")) t.timing.max_reps = r.integer(tm.at("max_reps"), "timing.max_reps", 1, 100000);
      if (tm.contains("target_spread"))
        t.timing.target_spread = r.number(tm.at("target_spread"), "timing.target_spread");
      if (tm.contains("budget_ms")) t.timing.budget_ms = r.integer(tm.at("budget_ms"), "timing.budget_ms", 1, 600000);
    }
  }

  // The task library's fields (task_library.hpp), each optional here; validate checks their values
  // and require_library_fields that a built-in task has them all.
  void read_library() {
    TaskLibraryInfo& lib = t.library;
    auto text = [&](const char* key, std::string& out) {
      if (doc.contains(key)) {
        out = r.string(doc.at(key), key);
        if (out.empty()) fail(r.task, key, "empty (leave the key out instead)");
      }
    };
    text("category", lib.category);
    if (doc.contains("tier")) lib.tier = r.integer(doc.at("tier"), "tier", 1, 3);
    if (doc.contains("bytes")) lib.bytes = r.expression(doc.at("bytes"), "bytes");
    if (doc.contains("flops")) lib.flops = r.expression(doc.at("flops"), "flops");
    text("split", lib.split);
    text("tolerance_reason", lib.tolerance_reason);
    text("oracle_file", lib.oracle_file);
    if (doc.contains("compile_cpu_seconds")) {
      lib.compile_cpu_seconds =
          r.integer(doc.at("compile_cpu_seconds"), "compile_cpu_seconds", 1, k_max_compile_cpu_seconds);
    }
    if (doc.contains("provenance")) {
      const json& p = r.object(doc.at("provenance"), "provenance");
      r.only_keys(p, "provenance", {"origin", "semantics", "licence"});
      TaskProvenance out;
      for (const auto& [key, field] : {std::pair{"origin", &out.origin}, std::pair{"semantics", &out.semantics},
                                       std::pair{"licence", &out.licence}}) {
        const std::string f = std::string("provenance.") + key;
        if (!p.contains(key)) fail(r.task, f, "missing");
        *field = r.string(p.at(key), f);
      }
      lib.provenance = std::move(out);
    }
  }
};

}  // namespace

TaskSpec parse_task(std::string_view json_text, const FileResolver& resolve) {
  const json doc = parse_document(json_text);
  SpecParse s{Reader{}, doc, TaskSpec{}};
  Reader& r = s.r;
  TaskSpec& t = s.t;
  if (doc.is_object() && doc.contains("name") && doc.at("name").is_string()) r.task = doc.at("name").get<std::string>();
  r.object(doc, "spec");
  r.only_keys(doc, "",
              {"name",   "description",      "entry",     "params",           "sizes",       "check_sizes",
               "launch", "candidate_launch", "reference", "reference_file",   "tolerance",   "trials",
               "timing", "time_limit_ms",    "variants",  "category",         "tier",        "bytes",
               "flops",  "provenance",       "split",     "tolerance_reason", "oracle_file", "compile_cpu_seconds"});
  t.name = r.string(s.need("name"), "name");
  if (doc.contains("description")) t.description = r.string(doc.at("description"), "description");
  t.entry = r.string(s.need("entry"), "entry");
  t.sizes = r.sizes(s.need("sizes"), "sizes");

  s.read_params();
  s.read_check_sizes();
  s.read_launch();
  s.read_candidate_launch();
  s.read_reference(resolve);
  s.read_checking_and_timing();
  s.read_library();
  validate(t);
  return t;
}

}  // namespace leap::sandbox
