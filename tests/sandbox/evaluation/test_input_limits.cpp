// SPDX-License-Identifier: Apache-2.0
// Hostile input to the sandbox's parsers: each refuses a document past its documented size or depth
// with an error that names the limit, and stays usable afterwards.
#include <catch2/catch.hpp>
#include "task_spec/size_expr.hpp"
#include <leap/sandbox/task.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/bounded_json.hpp"
#include "runner_pipe/frames.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
namespace dt = leap::sandbox::detail;
using nlohmann::json;

namespace {

std::string spec_with(const std::string& extra_key, const std::string& value) {
  return R"J({"name": "copy", "entry": "copy", "sizes": {"n": 1000}, "launch": {"grid": ["ceil_div(n, 256)"], "block": [256]},
    "params": [{"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
               {"name": "y", "dtype": "float32", "role": "out", "shape": ["n"]},
               {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    ")J" +
         extra_key + R"J(": )J" + value + "}";
}

std::string error_of(const std::string& spec, const sb::FileResolver& resolve = {}) {
  try {
    (void)sb::parse_task(spec, resolve);
  } catch (const sb::TaskError& e) {
    return e.what();
  }
  return "no error";
}

std::string nested(int levels, const std::string& open, const std::string& inner, const std::string& close) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += open;
  s += inner;
  for (int i = 0; i < levels; ++i) s += close;
  return s;
}

const char* k_reference =
    R"J("extern \"C\" __global__ void copy(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }")J";

}  // namespace

TEST_CASE("size expressions: nesting past the limit is an error, not a stack overflow") {
  const sb::Sizes s{{"n", 10}};
  CHECK(sb::eval_size_expr(nested(sb::k_max_size_expr_depth - 1, "(", "n", ")"), s) == 10);
  CHECK_THROWS_WITH(sb::eval_size_expr(nested(2000, "(", "n", ")"), s),
                    Catch::Contains("nested deeper than the limit of 64"));
  CHECK_THROWS_WITH(sb::eval_size_expr(std::string(4000, '-') + "n", s),
                    Catch::Contains("nested deeper than the limit"));
  CHECK_THROWS_WITH(sb::eval_size_expr(nested(400, "min(1,", "n", ")"), s),
                    Catch::Contains("nested deeper than the limit"));
  // The issue's 50 000 parentheses: past the length limit before the parser starts.
  CHECK_THROWS_WITH(sb::eval_size_expr(nested(50000, "(", "n", ")"), s),
                    Catch::Contains("longer than the limit of 4096"));
  // A long expression is refused by its length, and its error shows only the start of it.
  std::string long_sum = "n";
  while (long_sum.size() <= sb::k_max_size_expr_length) long_sum += " + n";
  CHECK_THROWS_WITH(sb::eval_size_expr(long_sum, s), Catch::Contains("longer than the limit of 4096"));
  try {
    (void)sb::eval_size_expr(nested(100, "(", "n", ")"), s);
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).size() < 200);
  }
  CHECK(sb::eval_size_expr("n * 2", s) == 20);  // still fine afterwards
}

TEST_CASE("task specs: size, depth, number range and counts are limited with named errors") {
  CHECK(error_of(spec_with("reference", k_reference)) == "no error");
  // 100 000 levels deep in a value: refused by the depth pre-scan, before any value is dumped.
  CHECK_THAT(error_of(spec_with("reference", nested(100000, "[", "1", "]"))),
             Catch::Contains("nested more than 16 levels"));
  CHECK_THAT(error_of(spec_with("description", nested(100000, "{\"a\":", "1", "}"))), Catch::Contains("the limit"));
  // A number out of double's range is a clear error, not an uncaught exception.
  CHECK_THAT(error_of(spec_with("trials", "1e400")),
             Catch::Contains("not valid JSON") && Catch::Contains("number overflow"));
  // Too big a document.
  CHECK_THAT(error_of(spec_with("description", "\"" + std::string(sb::k_max_task_spec_bytes, 'a') + "\"")),
             Catch::Contains("over the limit of 4194304"));
  // Counts that would make validation quadratic.
  std::string many = "[";
  for (int i = 0; i < 70; ++i) many += std::string(i ? "," : "") + R"({"n": 5})";
  many += "]";
  CHECK_THAT(error_of(spec_with("check_sizes", many)),
             Catch::Contains("check_sizes: 70 size sets, over the limit of 64"));
  // Depths just inside the limit are fine (a string holding brackets does not count).
  CHECK(error_of(spec_with("reference", k_reference).insert(1, "\"description\": \"[[[[[[[[[[[[[[[[[[[[[[[[\", ")) ==
        "no error");
}

TEST_CASE("task specs: reference_file stays in the spec's directory and its contents are never echoed") {
  leap_test::TempDir outside;
  leap_test::TempDir dir;
  const std::string secret = "TOP-SECRET-LINE";
  outside.write("secret.cu", secret);
  dir.write("ref.cu",
            "extern \"C\" __global__ void copy(const float* x, float* y, int n) { if (threadIdx.x < n) y[0] = x[0]; }");
  std::filesystem::create_directories(dir.path / "sub");
  dir.write("sub/ref.cu", "extern \"C\" __global__ void copy(const float* x, float* y, int n) { }");
  std::filesystem::create_symlink(outside.path / "secret.cu", dir.path / "escape.cu");
  std::filesystem::create_symlink(outside.path, dir.path / "outdir");
  std::filesystem::create_symlink("ref.cu", dir.path / "inside_link.cu");

  auto load = [&](const std::string& file) -> std::string {
    dir.write("task.json", spec_with("reference_file", json(file).dump()));
    try {
      const sb::TaskSpec t = sb::load_task_file((dir.path / "task.json").string());
      return "loaded:" + t.reference_source.substr(0, 10);
    } catch (const sb::TaskError& e) {
      return e.what();
    }
  };
  CHECK(load("ref.cu") == "loaded:extern \"C\"");
  CHECK(load("sub/ref.cu") == "loaded:extern \"C\"");
  CHECK(load("inside_link.cu") == "loaded:extern \"C\"");  // a symlink that stays inside is fine
  const std::string absolute = load((outside.path / "secret.cu").string());
  CHECK_THAT(absolute, Catch::Contains("reference_file") && Catch::Contains("is an absolute path"));
  CHECK_THAT(load("../" + outside.path.filename().string() + "/secret.cu"), Catch::Contains("contains '..'"));
  CHECK_THAT(load("sub/../../x.cu"), Catch::Contains("contains '..'"));
  CHECK_THAT(load("escape.cu"), Catch::Contains("leads out of the spec's directory"));
  CHECK_THAT(load("outdir/secret.cu"), Catch::Contains("leads out of the spec's directory"));
  CHECK_THAT(load("missing.cu"), Catch::Contains("cannot read \"missing.cu\""));
  CHECK_THAT(load("sub"), Catch::Contains("not a regular file"));
  CHECK_THAT(load("/etc/passwd"), Catch::Contains("is an absolute path") && !Catch::Contains("root:"));
  for (const std::string& f :
       std::vector<std::string>{"escape.cu", "outdir/secret.cu", (outside.path / "secret.cu").string()})
    CHECK_THAT(load(f), !Catch::Contains(secret));
}

TEST_CASE("CBOR frames: depth, lengths and tags are checked without recursion before decoding") {
  const dt::JsonLimits limits{1 << 20, 32};
  const json msg = {
      {"op", "eval"}, {"task", "{}"}, {"seed", 7}, {"blob", json::binary({1, 2, 3})}, {"x", {1.5, nullptr, true, -4}}};
  const std::vector<std::uint8_t> good = json::to_cbor(msg);
  const std::string bytes(good.begin(), good.end());
  CHECK(dt::cbor_problem(bytes, limits).empty());
  CHECK(dt::decode_bounded_cbor(bytes, limits) == msg);

  // 100 000 nested one-element arrays (0x81 ...): refused by depth instead of overflowing nlohmann's reader.
  CHECK_THAT(dt::cbor_problem(std::string(100000, '\x81') + '\x01', limits), Catch::Contains("nested more than 32"));
  // The same with indefinite-length arrays (0x9f).
  CHECK_THAT(dt::cbor_problem(std::string(100000, '\x9f'), limits), Catch::Contains("nested more than 32"));
  CHECK_THROWS_AS(dt::decode_bounded_cbor(std::string(100000, '\x81') + '\x01', limits), dt::JsonLimitError);
  // An array claiming 2^64-1 items, a string claiming 2^32 bytes: refused before anything is allocated.
  CHECK_THAT(dt::cbor_problem("\x9b\xff\xff\xff\xff\xff\xff\xff\xff", limits),
             Catch::Contains("more items than bytes left"));
  CHECK_THAT(dt::cbor_problem(std::string("\x5b\x00\x00\x00\x01\x00\x00\x00\x00", 9), limits),
             Catch::Contains("longer than"));
  CHECK_THAT(dt::cbor_problem("\xc1\x01", limits), Catch::Contains("tag"));
  CHECK_THAT(dt::cbor_problem(bytes + "x", limits), Catch::Contains("1 bytes after"));
  CHECK_THAT(dt::cbor_problem(bytes.substr(0, bytes.size() - 1), limits), Catch::Contains("ends inside"));
  CHECK_THAT(dt::cbor_problem("\xff", limits), Catch::Contains("break outside"));
  CHECK_THAT(dt::cbor_problem(std::string(2u << 20, '\x01'), limits), Catch::Contains("over the limit of 1048576"));
  // Indefinite strings and maps that nlohmann writes or reads are accepted.
  CHECK(dt::cbor_problem("\x7f\x61\x61\x62\x62\x62\xff", limits).empty());
  CHECK(dt::cbor_problem("\xbf\x61\x61\x01\xff", limits).empty());
  CHECK(dt::decode_bounded_cbor("\xbf\x61\x61\x01\xff", limits) == json{{"a", 1}});
  CHECK(dt::k_frame_limits.max_depth == 32);
}

TEST_CASE("JSON text: the depth pre-scan ignores brackets inside strings and escapes") {
  CHECK(dt::json_text_depth(R"({"a": "[[[[\"[[["})", 100) == 1);
  CHECK(dt::json_text_depth(R"([[1], {"b": [2]}])", 100) == 3);
  CHECK(dt::json_text_depth(std::string(1000, '['), 10) == 11);  // stops early
  CHECK_THROWS_AS(dt::parse_bounded_json("[" + std::string(70, '[') + std::string(71, ']'), {1000, 64}),
                  dt::JsonLimitError);
  CHECK_THROWS_AS(dt::parse_bounded_json("[1e400]", {1000, 64}), json::out_of_range);
}
