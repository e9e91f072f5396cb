// SPDX-License-Identifier: Apache-2.0
// leap-sandbox tasks, eval and serve, run as a user would, on a machine without a GPU.
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <leap/sandbox/builtin_tasks.hpp>

#include "cli_runner.hpp"

using leap_test::json_lines;
using leap_test::run_cli;
using nlohmann::json;
using Run = leap_test::CliRun;

namespace {

bool machine_has_gpu(const leap_test::TempDir& dir) {
  return json::parse(run_cli("info --json", dir).out).at("gpu").at("available").get<bool>();
}

}  // namespace

TEST_CASE("cli tasks: lists the built-in tasks, --json gives full specs with reference sources", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const Run text = run_cli("tasks", dir);
  CHECK(text.exit_code == 0);
  for (const char* name :
       {"scale_add", "row_sum", "softmax", "matmul", "transpose", "layernorm", "row_scan", "gelu_fp16"}) {
    CHECK_THAT(text.out, Catch::Contains(name));
  }
  CHECK_THAT(text.out,
             Catch::Contains("scale_add (elementwise, tier 1, train; kernel scale_add; launch fixed; variants:"));
  CHECK_THAT(text.out,
             Catch::Contains("row_sum (reduction, tier 2, train; kernel row_sum; launch plans allowed: up to 4 "
                             "kernels, 1024 threads per block, "
                             "48 KiB shared, 64 MiB scratch; variants: reference broken fast lowprec two_pass wrong)"));
  const Run js = run_cli("tasks --json", dir);
  REQUIRE(js.exit_code == 0);
  const json all = json::parse(js.out);
  REQUIRE(all.size() >= 8);
  for (const json& t : all) {
    CHECK_THAT(t.at("reference").get<std::string>(), Catch::Contains("__global__"));
    CHECK(t.at("variants").size() >= 4);
  }
}

TEST_CASE("cli tasks: --category, --tier and --split choose tasks, and a value outside the list is named",
          "[sandbox][cli]") {
  leap_test::TempDir dir;
  const json all = json::parse(run_cli("tasks --json", dir).out);
  const auto count = [&](const std::string& key, const json& value) {
    std::size_t n = 0;
    for (const json& t : all) n += t.at(key) == value ? 1 : 0;
    return n;
  };
  const Run gemm = run_cli("tasks --json --category gemm", dir);
  REQUIRE(gemm.exit_code == 0);
  const json g = json::parse(gemm.out);
  CHECK(g.size() == count("category", "gemm"));
  CHECK(g.size() >= 8);
  for (const json& t : g) CHECK(t.at("category") == "gemm");

  const json holdout = json::parse(run_cli("tasks --json --split holdout", dir).out);
  CHECK(holdout.size() == count("split", "holdout"));
  const json train = json::parse(run_cli("tasks --json --split train", dir).out);
  CHECK(train.size() + holdout.size() == all.size());
  CHECK(holdout.size() * 5 < all.size());  // about a tenth held out
  CHECK(!holdout.empty());

  // Filters combine: every tier-1 train activation, and nothing else.
  const json narrow = json::parse(run_cli("tasks --json --category activation --tier 1 --split train", dir).out);
  CHECK(!narrow.empty());
  for (const json& t : narrow) {
    CHECK(t.at("category") == "activation");
    CHECK(t.at("tier") == 1);
    CHECK(t.at("split") == "train");
  }
  const Run text = run_cli("tasks --category scan", dir);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("row_scan (scan, tier 2,"));
  CHECK_THAT(text.out, !Catch::Contains("softmax ("));

  const Run bad = run_cli("tasks --category gemms", dir);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--category: unknown value 'gemms' (one of activation, loss, gemm,"));
  const Run bad_tier = run_cli("tasks --tier 4", dir);
  CHECK(bad_tier.exit_code == 2);
  CHECK_THAT(bad_tier.err, Catch::Contains("--tier expects a number in [1, 3]"));
}

std::string variant(const char* task, const char* name) {
  return leap::sandbox::find_builtin_task(task)->variant(name)->source;
}

TEST_CASE("cli eval: exit codes and JSON without a GPU", "[sandbox][cli]") {
  leap_test::TempDir dir;
  if (machine_has_gpu(dir)) return;  // the gpu-labelled suite covers verdicts there
  const std::string fast = dir.write("fast.cu", variant("row_sum", "fast")).string();
  const std::string broken = dir.write("broken.cu", variant("row_sum", "broken")).string();

  const Run nogpu = run_cli("eval --json row_sum '" + fast + "'", dir);
  CHECK(nogpu.exit_code == 3);
  const json a = json::parse(nogpu.out);
  CHECK(a.at("status") == "no_gpu");
  CHECK(a.at("verdict").is_null());
  CHECK(a.at("speedup").is_null());
  CHECK(a.contains("timings"));
  CHECK(a.contains("feedback"));

  const Run ce = run_cli("eval --json row_sum '" + broken + "'", dir);
  CHECK(ce.exit_code == 0);
  const json b = json::parse(ce.out);
  CHECK(b.at("verdict") == "compile_error");
  CHECK_THAT(b.at("feedback").get<std::string>(), Catch::Contains("warp_id"));

  const Run text = run_cli("eval row_sum '" + broken + "'", dir);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("compile_error"));

  // A spec file with the reference beside it.
  dir.write("ref.cu", variant("scale_add", "reference"));
  const std::string spec = dir.write("spec.json", R"J({"name": "mine", "entry": "scale_add", "reference_file": "ref.cu",
    "params": [{"name": "x", "dtype": "float32", "shape": ["n"]}, {"name": "y", "dtype": "float32", "shape": ["n"]},
               {"name": "out", "dtype": "float32", "role": "out", "shape": ["n"]},
               {"name": "alpha", "kind": "scalar", "dtype": "float32", "value": 2.0}, {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "launch": {"grid": ["ceil_div(n, 1024)"], "block": [256]}})J")
                               .string();
  const std::string sa = dir.write("sa.cu", variant("scale_add", "fast")).string();
  CHECK(run_cli("eval --json '" + spec + "' '" + sa + "'", dir).exit_code == 3);

  const Run unknown = run_cli("eval no_such_task '" + fast + "'", dir);
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("unknown task 'no_such_task'"));
  const std::string bad_spec =
      dir.write(
             "bad.json",
             R"J({"name": "bad", "entry": "k", "params": [], "sizes": {"n": 1}, "launch": {"grid": 1, "block": 1}, "reference": "x"})J")
          .string();
  const Run malformed = run_cli("eval '" + bad_spec + "' '" + fast + "'", dir);
  CHECK(malformed.exit_code == 2);
  CHECK_THAT(malformed.err, Catch::Contains("task 'bad': params: empty"));
  // The operator's opt-in for devices whose kernels reach pageable host memory is an option of its
  // own (the GPU runner acts on it; without a GPU the evaluation ends at no_gpu as before).
  CHECK(run_cli("eval --json --allow-pageable-host-access row_sum '" + fast + "'", dir).exit_code == 3);
  CHECK_THAT(run_cli("--help", dir).out, Catch::Contains("--allow-pageable-host-access"));
  CHECK(run_cli("eval row_sum /no/such/file.cu", dir).exit_code == 2);
  CHECK(run_cli("eval row_sum", dir).exit_code == 2);
}

TEST_CASE("cli eval: a declared launch plan is reported before no_gpu, an invalid one is a compile_error",
          "[sandbox][cli][plan]") {
  leap_test::TempDir dir;
  if (machine_has_gpu(dir)) return;
  const std::string two_pass = variant("row_sum", "two_pass");
  const std::string good = dir.write("two_pass.cu", two_pass).string();
  const Run text = run_cli("eval row_sum '" + good + "'", dir);
  CHECK(text.exit_code == 3);
  CHECK_THAT(
      text.out,
      Catch::Contains(
          "launch plan (declared), at sizes {cols=4096, rows=16384}: row_chunk_sums grid=(4, 16384) "
          "block=(256) shared=1024; row_chunk_total grid=(16384) block=(32); scratch partials: 65536 x float32"));

  // The kernels in a header (--header), the plan in the candidate's own source.
  const std::size_t kernels_at = two_pass.find("extern \"C\"");
  dir.write("row_kernels.cuh", two_pass.substr(kernels_at));
  const std::string with_header =
      dir.write("plan_only.cu", two_pass.substr(0, kernels_at) + "#include \"row_kernels.cuh\"\n").string();
  const Run js = run_cli("eval --json --header row_kernels.cuh='" + (dir.path / "row_kernels.cuh").string() +
                             "' row_sum '" + with_header + "'",
                         dir);
  CHECK(js.exit_code == 3);
  const json j = json::parse(js.out);
  CHECK(j.at("launch_plan").at("source") == "candidate");
  CHECK(j.at("launch_plan").at("kernels").size() == 2);
  CHECK(run_cli("eval --header nonsense row_sum '" + good + "'", dir).exit_code == 2);

  std::string wide = two_pass;
  wide.replace(wide.find("block=32"), 8, "block=2048");
  const Run bad = run_cli("eval row_sum '" + dir.write("wide.cu", wide).string() + "'", dir);
  CHECK(bad.exit_code == 0);
  CHECK_THAT(
      bad.out,
      Catch::Contains("row_sum: verdict, compile_error") &&
          Catch::Contains(
              "Launch plan error: line 5, kernel 'row_chunk_total': block x \"2048\" is 2048, over the limit of 1024"));
  const Run refused = run_cli("eval --json scale_add '" + good + "'", dir);
  CHECK(refused.exit_code == 0);
  CHECK(json::parse(refused.out).at("launch_plan").at("status") == "refused");
}

TEST_CASE("cli serve: responses matched by id, malformed lines answered with id null, EOF drains", "[sandbox][cli]") {
  leap_test::TempDir dir;
  const bool gpu = machine_has_gpu(dir);
  json eval_fast = {{"id", "e1"}, {"op", "eval"}, {"task", "softmax"}, {"source", variant("softmax", "fast")}};
  json eval_broken = {{"id", 7}, {"op", "eval"}, {"task", "softmax"}, {"source", variant("softmax", "broken")}};
  json compile = {{"id", 3}, {"op", "compile"}, {"source", variant("matmul", "fast")}};
  json info = {{"id", 4}, {"op", "info"}};
  json unknown_op = {{"id", 5}, {"op", "dance"}};
  json unknown_task = {{"id", 6}, {"op", "eval"}, {"task", "nope"}, {"source", "x"}};
  const std::string input = eval_fast.dump() + "\n{this is not json\n" + eval_broken.dump() + "\n\n[1, 2]\n" +
                            compile.dump() + "\n" + info.dump() + "\n" + unknown_op.dump() + "\n" +
                            unknown_task.dump() + "\n";
  const Run r = run_cli("serve", dir, input);
  CHECK(r.exit_code == 0);
  const std::vector<json> lines = json_lines(r.out);
  REQUIRE(lines.size() == 8);
  std::map<std::string, json> by_id;
  int nulls = 0;
  for (const json& l : lines) {
    if (l.at("id").is_null()) {
      ++nulls;
      CHECK(l.at("ok") == false);
      CHECK_THAT(l.at("error").get<std::string>(), Catch::Contains("malformed"));
    } else {
      by_id[l.at("id").dump()] = l;
    }
  }
  CHECK(nulls == 2);
  REQUIRE(by_id.size() == 6);
  const json& ef = by_id.at("\"e1\"");
  CHECK(ef.at("ok") == true);
  if (!gpu) CHECK(ef.at("result").at("status") == "no_gpu");
  CHECK(by_id.at("7").at("result").at("verdict") == "compile_error");
  CHECK(by_id.at("3").at("result").at("status") == "ok");
  CHECK(by_id.at("3").at("result").at("pch") != "none");  // serve compiles in its pooled compilers, with a PCH
  CHECK(by_id.at("4").at("result").contains("gpu"));
  CHECK(by_id.at("4").at("result").at("compile_pool").at("isolation") == "pooled");
  CHECK(by_id.at("4").at("result").at("compile_pool").at("pch") == true);
  CHECK(by_id.at("5").at("ok") == false);
  CHECK_THAT(by_id.at("6").at("error").get<std::string>(), Catch::Contains("unknown task"));
}

TEST_CASE("cli: serve takes --compiles-per-process, and its 0.1 spelling --worker-compiles with a warning",
          "[sandbox][cli]") {
  leap_test::TempDir dir;
  const std::string info = json{{"id", 1}, {"op", "info"}}.dump() + "\n";
  const Run now = run_cli("serve --compiles-per-process 7", dir, info);
  const Run old = run_cli("serve --worker-compiles 9", dir, info);
  REQUIRE(now.exit_code == 0);
  REQUIRE(old.exit_code == 0);
  const std::vector<json> now_lines = json_lines(now.out), old_lines = json_lines(old.out);
  REQUIRE(now_lines.size() == 1);
  REQUIRE(old_lines.size() == 1);
  const json& now_pool = now_lines[0].at("result").at("compile_pool");
  CHECK(now_pool.at("isolation") == "pooled");
  CHECK(now_pool.at("max_compiles_per_process") == 7);
  CHECK(old_lines[0].at("result").at("compile_pool").at("max_compiles_per_process") == 9);
  CHECK(now.err.find("deprecated") == std::string::npos);
  CHECK_THAT(old.err, Catch::Contains("--worker-compiles is deprecated; use --compiles-per-process"));
}
