// SPDX-License-Identifier: Apache-2.0
// Task specs: the size-expression language, validation messages, the built-in tasks and their variants.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/compiler.hpp>
#include "evaluation/correctness_inputs.hpp"
#include "task_spec/size_expr.hpp"
#include <leap/sandbox/task.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace sb = leap::sandbox;

namespace {

std::string minimal_spec(const std::string& patch_key = "", const std::string& patch_value = "") {
  std::string params = R"J([{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
                           {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
                           {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J";
  std::string launch = R"J({"grid": ["ceil_div(n, 256)"], "block": [256]})J";
  std::string sizes = R"J({"n": 1000})J";
  if (patch_key == "params") params = patch_value;
  if (patch_key == "launch") launch = patch_value;
  if (patch_key == "sizes") sizes = patch_value;
  std::string extra = patch_key == "extra" ? ", " + patch_value : "";
  return R"J({"name": "copy", "entry": "copy", "params": )J" + params + R"J(, "sizes": )J" + sizes +
         R"J(, "launch": )J" + launch +
         R"J(, "reference": "extern \"C\" __global__ void copy(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }")J" +
         extra + "}";
}

std::string error_of(const std::string& spec) {
  try {
    (void)sb::parse_task(spec);
  } catch (const sb::TaskError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("size expressions: arithmetic, functions, errors", "[sandbox][task]") {
  const sb::Sizes s{{"n", 1000}, {"rows", 7}};
  CHECK(sb::eval_size_expr("ceil_div(n, 256)", s) == 4);
  CHECK(sb::eval_size_expr("rows * (n + 1) - 3 % 2", s) == 7006);
  CHECK(sb::eval_size_expr("min(n, rows) + max(1, 2) + pow2_ceil(1000)", s) == 7 + 2 + 1024);
  CHECK(sb::eval_size_expr("-n / 3", s) == -333);
  CHECK(sb::eval_size_expr(" 42 ", s) == 42);
  CHECK_THROWS_WITH(sb::eval_size_expr("m + 1", s), Catch::Contains("unknown size 'm'"));
  CHECK_THROWS_WITH(sb::eval_size_expr("n / 0", s), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(sb::eval_size_expr("n +", s), Catch::Contains("unexpected end"));
  CHECK_THROWS_WITH(sb::eval_size_expr("floor(n)", s), Catch::Contains("unknown function"));
  CHECK_THROWS_WITH(sb::eval_size_expr("9223372036854775807 * 2", s), Catch::Contains("overflow"));
  CHECK_THROWS_WITH(sb::eval_size_expr("1.5", s), Catch::Contains("not an integer"));
  CHECK(sb::sizes_text(s) == "{n=1000, rows=7}");  // as messages name a size set
  CHECK(sb::sizes_text({}) == "{}");
}

TEST_CASE("task specs: a minimal spec parses, round-trips through JSON and resolves", "[sandbox][task]") {
  const sb::TaskSpec t = sb::parse_task(minimal_spec());
  CHECK(t.name == "copy");
  REQUIRE(t.params.size() == 3);
  CHECK(t.params[2].kind == sb::ParamKind::scalar);
  CHECK(sb::element_count(t.params[0], t.sizes) == 1000);
  const sb::ResolvedLaunch l = sb::resolve_launch(t, t.sizes);
  CHECK(l.grid[0] == 4);
  CHECK(l.block[0] == 256);
  CHECK(l.block[1] == 1);
  const sb::TaskSpec back = sb::parse_task(sb::task_to_json(t));
  CHECK(sb::task_to_json(back) == sb::task_to_json(t));
}

TEST_CASE("task specs: validation names the field and the value", "[sandbox][task]") {
  CHECK(error_of(R"J({"name": "softmax"})J") == "task 'softmax': entry: missing");
  CHECK(error_of(minimal_spec("params", R"J([{"name": "x", "dtype": "float64", "shape": ["n"]}])J")) ==
        "task 'copy': params[0].dtype: unknown dtype \"float64\" (float32, float16, bfloat16, int32 or int8)");
  CHECK_THAT(
      error_of(minimal_spec("params", R"J([{"name": "x", "dtype": "float32", "role": "out", "shape": ["m"]}])J")),
      Catch::Contains("params[0].shape") && Catch::Contains("unknown size 'm'"));
  CHECK_THAT(
      error_of(minimal_spec("params", R"J([{"name": "x", "dtype": "float32", "role": "sideways", "shape": ["n"]}])J")),
      Catch::Contains("params[0].role: unknown role \"sideways\""));
  CHECK_THAT(error_of(minimal_spec("params", R"J([{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]}])J")),
             Catch::Contains("no buffer with role out or inout"));
  CHECK_THAT(
      error_of(minimal_spec(
          "params",
          R"J([{"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]}])J")),
      Catch::Contains("params[1].name: duplicate name \"y\""));
  CHECK_THAT(
      error_of(minimal_spec(
          "params",
          R"J([{"name": "y", "dtype": "float32", "role": "inout", "shape": ["n"], "generator": {"kind": "poisson"}}])J")),
      Catch::Contains("params[0].generator.kind: unknown generator \"poisson\""));
  CHECK_THAT(error_of(minimal_spec("launch", R"J({"grid": [1], "block": [2048]})J")),
             Catch::Contains("launch") && Catch::Contains("launch.block[0]") && Catch::Contains("2048"));
  CHECK_THAT(error_of(minimal_spec("sizes", R"J({"n": -5})J")),
             Catch::Contains("sizes.n: expected a positive integer"));
  CHECK_THAT(error_of(minimal_spec("extra", R"J("trials": 0)J")),
             Catch::Contains("trials: expected an integer in [1, 100]"));
  CHECK_THAT(error_of(minimal_spec("extra", R"J("tolerance": {"float64": {"atol": 1}})J")),
             Catch::Contains("tolerance.float64: unknown dtype"));
  CHECK_THAT(error_of(minimal_spec("extra", R"J("colour": "blue")J")), Catch::Contains("colour: unknown key"));
  CHECK_THAT(error_of("{not json"), Catch::Contains("not valid JSON"));
}

TEST_CASE("task specs: inputs that would repeat on every timed run are refused, and special values need a float",
          "[sandbox][task]") {
  // constant and arange give every timed run the same input: a kernel could reuse its last answer.
  for (const char* kind : {"constant", "arange"}) {
    INFO(kind);
    const std::string params =
        std::string(R"J([{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"], "generator": {"kind": ")J") +
        kind +
        R"J("}}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]}, {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J";
    CHECK_THAT(error_of(minimal_spec("params", params)),
               Catch::Contains("params[0].generator.kind: \"" + std::string(kind) +
                               "\" gives the same input on every timed run") &&
                   Catch::Contains("uniform, normal, randint, rademacher or student_t"));
  }
  CHECK_THAT(
      error_of(minimal_spec(
          "params",
          R"J([{"name": "x", "dtype": "int32", "role": "in", "shape": ["n"], "generator": {"kind": "randint", "special": true}}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]}, {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J")),
      Catch::Contains("params[0].generator.special: NaN, infinities, subnormals and -0 need a float dtype"));
  CHECK_THAT(
      error_of(minimal_spec(
          "params",
          R"J([{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"], "generator": {"kind": "uniform", "special": 1}}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]}, {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J")),
      Catch::Contains("params[0].generator.special: must be true or false"));
  // Declared, it survives the round trip through JSON.
  const sb::TaskSpec t = sb::parse_task(minimal_spec(
      "params",
      R"J([{"name": "x", "dtype": "float16", "role": "in", "shape": ["n"], "generator": {"kind": "normal", "special": true}}, {"name": "y", "dtype": "float16", "role": "out", "shape": ["n"]}, {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J"));
  CHECK(t.params[0].generator.special);
  CHECK(sb::parse_task(sb::task_to_json(t)).params[0].generator.special);
  CHECK_FALSE(sb::parse_task(minimal_spec()).params[0].generator.special);
}

TEST_CASE("a generator kind has the same defaults written as a string or as an object", "[sandbox][task]") {
  auto generator_of = [](const std::string& generator, const char* dtype) {
    const std::string params =
        std::string(R"J([{"name": "x", "dtype": ")J") + dtype + R"J(", "role": "in", "shape": ["n"], "generator": )J" +
        generator +
        R"J(}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]}, {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J";
    return sb::parse_task(minimal_spec("params", params)).params[0].generator;
  };
  struct Case {
    const char* kind;
    const char* dtype;
    double a, b;
  };
  for (const Case& c : {Case{"uniform", "float32", -1.0, 1.0}, Case{"normal", "float32", 0.0, 1.0},
                        Case{"randint", "int32", -100.0, 100.0}}) {
    INFO(c.kind);
    const sb::Generator bare = generator_of(std::string("\"") + c.kind + "\"", c.dtype);
    const sb::Generator object = generator_of(std::string(R"J({"kind": ")J") + c.kind + "\"}", c.dtype);
    CHECK(sb::to_string(bare.kind) == c.kind);
    CHECK(bare.a == c.a);
    CHECK(bare.b == c.b);
    CHECK(object.a == c.a);
    CHECK(object.b == c.b);
  }
  // An object's keys override the kind's defaults.
  const sb::Generator normal = generator_of(R"J({"kind": "normal", "mean": 2.5})J", "float32");
  CHECK(normal.a == 2.5);
  CHECK(normal.b == 1.0);
}

TEST_CASE("built-in tasks: at least 8, each with reference, fast, wrong and broken variants", "[sandbox][task]") {
  for (const sb::BuiltinTaskError& e : sb::builtin_task_errors()) FAIL_CHECK(e.task << ": " << e.message);
  const auto& tasks = sb::builtin_tasks();
  REQUIRE(tasks.size() >= 8);
  bool has_half = false;
  for (const sb::BuiltinTask& t : tasks) {
    INFO(t.spec.name);
    CHECK_FALSE(t.spec.description.empty());
    for (const char* v : {"reference", "fast", "wrong", "broken"}) CHECK(t.variant(v) != nullptr);
    CHECK(sb::find_builtin_task(t.spec.name) == &t);
    CHECK_FALSE(t.spec.check_sizes.empty());  // ragged sizes catch edge bugs
    for (const sb::Param& p : t.spec.params)
      has_half = has_half || p.dtype == sb::DType::float16 || p.dtype == sb::DType::bfloat16;
    CHECK_NOTHROW(sb::parse_task(sb::task_to_json(t.spec)));
  }
  CHECK(has_half);
  CHECK(sb::find_builtin_task("no_such_task") == nullptr);
}

// That every shipped kernel compiles with NVRTC exactly when it should is a check of `tasks verify`
// (variant:NAME, compile:reference:nvrtc), which each task's tasks_verify:<task> CTest runs.

TEST_CASE("randint bounds may be size expressions, resolved and checked at every size set", "[sandbox][task]") {
  auto params_with = [](const std::string& generator) {
    return R"J([{"name": "x", "dtype": "int32", "role": "in", "shape": ["n"], "generator": )J" + generator +
           R"J(}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
                  {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J";
  };
  const sb::TaskSpec t =
      sb::parse_task(minimal_spec("params", params_with(R"J({"kind": "randint", "low": 0, "high": "n - 1"})J")));
  const sb::Generator& g = t.params[0].generator;
  CHECK(g.low_expr.empty());
  CHECK(g.high_expr == "n - 1");
  CHECK(sb::parse_task(sb::task_to_json(t)).params[0].generator.high_expr == "n - 1");  // written back as written

  // Resolved at a size set, every drawn index is in range, and the range is used.
  const sb::Generator at = sb::generator_at(t.params[0], {{"n", 1000}});
  CHECK(at.a == 0.0);
  CHECK(at.b == 999.0);
  CHECK(at.high_expr.empty());
  std::vector<std::int32_t> drawn(20000);
  sb::generate(sb::DType::int32, at, 7, drawn.data(), drawn.size());
  CHECK(*std::min_element(drawn.begin(), drawn.end()) >= 0);
  CHECK(*std::max_element(drawn.begin(), drawn.end()) == 999);

  // A bound that leaves no value at some check size is refused, naming the size set.
  const std::string empty_at_one =
      minimal_spec("params", params_with(R"J({"kind": "randint", "low": 0, "high": "n - 2"})J"));
  const std::string with_check = empty_at_one.substr(0, empty_at_one.size() - 1) + R"J(, "check_sizes": [{"n": 1}]})J";
  CHECK_THAT(error_of(with_check), Catch::Contains("params[0].generator: low must be below high (at sizes {n=1}"));
  // A name the sizes do not define is named too.
  CHECK_THAT(error_of(minimal_spec("params", params_with(R"J({"kind": "randint", "low": 0, "high": "vocab - 1"})J"))),
             Catch::Contains("randint high \"vocab - 1\""));
}

TEST_CASE("rademacher, student_t and random_scale are written, read back and checked", "[sandbox][task]") {
  auto spec_with = [](const std::string& generator) {
    return minimal_spec(
        "params", R"J([{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"], "generator": )J" + generator +
                      R"J(}, {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
                  {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J");
  };
  const sb::TaskSpec t =
      sb::parse_task(spec_with(R"J({"kind": "student_t", "mean": 1, "scale": 0.5, "random_scale": true})J"));
  const sb::Generator& g = t.params[0].generator;
  CHECK(g.kind == sb::GeneratorKind::student_t);
  CHECK(g.a == 1.0);
  CHECK(g.b == 0.5);
  CHECK(g.random_scale);
  const sb::Generator back = sb::parse_task(sb::task_to_json(t)).params[0].generator;
  CHECK(back.kind == g.kind);
  CHECK(back.b == 0.5);
  CHECK(back.random_scale);
  const sb::Generator r = sb::parse_task(spec_with(R"J("rademacher")J")).params[0].generator;
  CHECK(r.a == 0.0);
  CHECK(r.b == 1.0);
  CHECK_THAT(error_of(spec_with(R"J({"kind": "student_t", "scale": 0})J")),
             Catch::Contains("params[0].generator.scale: must be positive"));
  CHECK_THAT(error_of(spec_with(R"J({"kind": "rademacher", "std": -1})J")),
             Catch::Contains("params[0].generator.std: must be positive"));
  CHECK_THAT(error_of(spec_with(R"J({"kind": "randint", "random_scale": true})J")),
             Catch::Contains("params[0].generator.random_scale: scales a distribution's location and spread"));
  CHECK_THAT(error_of(spec_with(R"J({"kind": "normal", "random_scale": 1})J")),
             Catch::Contains("params[0].generator.random_scale: must be true or false"));
}

// A task's stem: its name without a dtype suffix (gelu_fp16 -> gelu, matmul_bf16_fp32acc -> matmul).
static std::string task_stem(std::string name) {
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* suffix : {"_fp16", "_bf16", "_fp32acc"}) {
      const std::string s(suffix);
      if (name.size() > s.size() && name.ends_with(s)) {
        name.resize(name.size() - s.size());
        stripped = true;
      }
    }
  }
  return name;
}

TEST_CASE("built-in tasks: about a tenth held out, and no train task is a holdout task's twin", "[sandbox][task]") {
  std::vector<const sb::BuiltinTask*> train, holdout;
  for (const sb::BuiltinTask& t : sb::builtin_tasks())
    (t.spec.library.split == "holdout" ? holdout : train).push_back(&t);
  const double share = static_cast<double>(holdout.size()) / static_cast<double>(train.size() + holdout.size());
  CHECK(share >= 0.07);
  CHECK(share <= 0.15);
  // A holdout task's dtype twins, or a train task whose name extends its stem, would leak it into training.
  for (const sb::BuiltinTask* h : holdout) {
    const std::string stem = task_stem(h->spec.name);
    for (const sb::BuiltinTask* t : train) {
      INFO("holdout " << h->spec.name << ", train " << t->spec.name);
      CHECK(task_stem(t->spec.name) != stem);
      CHECK_FALSE(t->spec.name.starts_with(stem + "_"));
    }
  }
  CHECK(task_stem("matmul_bf16_fp32acc") == "matmul");
  CHECK(task_stem("gelu_fp16") == "gelu");
}

TEST_CASE("int8 buffers are accepted, written back, and refused as scalars or with special values", "[sandbox][task]") {
  const std::string buffer = minimal_spec(
      "params",
      R"J([{"name": "x", "dtype": "int8", "role": "in", "shape": ["n"], "generator": {"kind": "randint", "low": -127, "high": 127}},
      {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J");
  const sb::TaskSpec t = sb::parse_task(buffer);
  CHECK(t.params[0].dtype == sb::DType::int8);
  CHECK(sb::parse_task(sb::task_to_json(t)).params[0].dtype == sb::DType::int8);
  CHECK_THAT(error_of(minimal_spec("params", R"J([{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
      {"name": "n", "kind": "scalar", "dtype": "int8", "value": "n"}])J")),
             Catch::Contains("params[2].dtype: a scalar is float32 or int32, got \"int8\""));
  CHECK_THAT(
      error_of(minimal_spec(
          "params",
          R"J([{"name": "x", "dtype": "int8", "role": "in", "shape": ["n"], "generator": {"kind": "randint", "special": true}},
      {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}])J")),
      Catch::Contains("params[0].generator.special: NaN, infinities, subnormals and -0 need a float dtype"));
  CHECK_THAT(error_of(minimal_spec("params", R"J([{"name": "x", "dtype": "int4", "role": "in", "shape": ["n"]}])J")),
             Catch::Contains("(float32, float16, bfloat16, int32 or int8)"));
}
