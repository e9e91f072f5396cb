// SPDX-License-Identifier: Apache-2.0
// `tasks verify`'s rules, each on a copy of a built-in task with one thing changed: a planted bug in
// the reference (a removed __syncthreads, an index off by one, a dropped tail) fails the oracle check
// with a message naming the task, the size set and the first differing element; a degenerate task
// (an input that does not matter, outputs under atol) is refused; a plan line in a reference is
// refused; the negatives are caught; the variants keep their verdicts; the reduced timing size is
// deterministic and within its caps; built-in rules name the missing field.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "task_spec/size_expr.hpp"
#include "leap/sandbox/builtin_tasks.hpp"
#include "verify/reduced_sizes.hpp"
#include "verify/verify_task.hpp"

namespace {

namespace sb = leap::sandbox;
namespace vf = leap::sandbox::verify;

vf::ModuleCache& cache() {
  static vf::ModuleCache c(LEAP_VERIFY_TEST_CACHE);
  return c;
}

vf::VerifyTarget builtin(const std::string& name) {
  const sb::BuiltinTask* t = sb::find_builtin_task(name);
  REQUIRE(t != nullptr);
  return vf::target_of(*t);
}

const vf::CheckResult* check(const vf::TaskReport& r, const std::string& name) {
  for (const vf::CheckResult& c : r.checks)
    if (c.name == name) return &c;
  return nullptr;
}

bool passed(const vf::TaskReport& r, const std::string& name) {
  const vf::CheckResult* c = check(r, name);
  return c != nullptr && c->ok;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

vf::VerifyOptions reference_only() {
  vf::VerifyOptions o;
  o.negatives = false;
  o.variants = false;
  o.degeneracy = false;
  return o;
}

}  // namespace

TEST_CASE("verify: the built-in row_sum passes every check", "[verify]") {
  const vf::TaskReport r = vf::verify_task(builtin("row_sum"), cache());
  INFO(vf::to_text(r, false));
  CHECK(r.ok());
  for (const char* name :
       {"reference_launch", "compile:reference", "compile:reference:nvrtc", "compile:oracle", "reference_vs_oracle",
        "negative:zeros", "negative:copy_of_input", "negative:partial_output", "variant:fast", "variant:wrong",
        "variant:lowprec", "variant:broken", "degenerate:seeds", "degenerate:input:x", "degenerate:magnitude:out"})
    CHECK(check(r, name) != nullptr);
}

TEST_CASE("verify: a removed __syncthreads in the reference is caught, naming task, sizes and element", "[verify]") {
  vf::VerifyTarget t = builtin("row_sum");
  // The barrier inside the tree: without it a thread reads a partner's partial before it is added.
  t.spec.reference_source =
      replaced(t.spec.reference_source,
               "if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];\n    __syncthreads();",
               "if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];");
  const vf::TaskReport r = vf::verify_task(t, cache(), reference_only());
  const vf::CheckResult* c = check(r, "reference_vs_oracle");
  REQUIRE(c != nullptr);
  INFO(c->detail);
  CHECK_FALSE(c->ok);
  CHECK(c->detail.find("task 'row_sum'") != std::string::npos);
  CHECK(c->detail.find("schedule") != std::string::npos);
  CHECK(c->detail.find("first at [") != std::string::npos);
  CHECK(c->detail.find("rows=") != std::string::npos);
}

TEST_CASE("verify: an index off by one and a dropped tail in the reference are caught", "[verify]") {
  SECTION("off by one") {
    vf::VerifyTarget t = builtin("transpose");
    t.spec.reference_source = replaced(t.spec.reference_source, "c) * rows + r", "c) * (rows - 1) + r");
    const vf::TaskReport r = vf::verify_task(t, cache(), reference_only());
    INFO(vf::to_text(r, false));
    CHECK_FALSE(passed(r, "reference_vs_oracle"));
  }
  SECTION("dropped tail") {
    vf::VerifyTarget t = builtin("scale_add");
    t.spec.reference_source = replaced(t.spec.reference_source, "< n", "< n - 1");
    const vf::TaskReport r = vf::verify_task(t, cache(), reference_only());
    const vf::CheckResult* c = check(r, "reference_vs_oracle");
    REQUIRE(c != nullptr);
    INFO(c->detail);
    CHECK_FALSE(c->ok);
    CHECK(c->detail.find("task 'scale_add'") != std::string::npos);
  }
}

TEST_CASE("verify: a launch plan in a reference is refused", "[verify]") {
  vf::VerifyTarget t = builtin("row_sum");
  t.spec.reference_source = "// leap-launch: row_sum grid=(rows) block=(256)\n" + t.spec.reference_source;
  const vf::TaskReport r = vf::verify_task(t, cache(), reference_only());
  const vf::CheckResult* c = check(r, "reference_launch");
  REQUIRE(c != nullptr);
  CHECK_FALSE(c->ok);
  CHECK(c->detail.find("leap-launch") != std::string::npos);
  CHECK_FALSE(r.ok());
}

TEST_CASE("verify: a degenerate task is refused", "[verify]") {
  SECTION("an input that does not change the output") {
    vf::VerifyTarget t = builtin("scale_add");
    // Both reference and oracle ignore y: they agree, and the task would not test reading it.
    t.spec.reference_source = replaced(t.spec.reference_source, "+ y[", "+ 0.0f * y[");
    t.oracle_source = replaced(t.oracle_source, "+ y[i]", "+ 0.0 * y[i]");
    const vf::TaskReport r = vf::verify_task(t, cache());
    INFO(vf::to_text(r, false));
    CHECK(passed(r, "reference_vs_oracle"));
    CHECK_FALSE(passed(r, "degenerate:input:y"));
    CHECK(passed(r, "degenerate:input:x"));
    CHECK_FALSE(r.ok());
  }
  SECTION("outputs that never rise far above atol") {
    vf::VerifyTarget t = builtin("scale_add");
    t.spec.tolerance[0] = {0.5, 0.0};  // float32: an absolute tolerance as large as the outputs
    const vf::TaskReport r = vf::verify_task(t, cache(), vf::VerifyOptions{});
    INFO(vf::to_text(r, false));
    CHECK_FALSE(passed(r, "degenerate:magnitude:out"));
  }
  SECTION("a float scalar that does not matter") {
    vf::VerifyTarget t = builtin("scale_add");
    t.spec.reference_source = replaced(t.spec.reference_source, "alpha *", "1.75f *");
    t.oracle_source = replaced(t.oracle_source, "alpha * x[i]", "1.75 * x[i]");
    const vf::TaskReport r = vf::verify_task(t, cache());
    INFO(vf::to_text(r, false));
    CHECK_FALSE(passed(r, "degenerate:scalar:alpha"));
  }
}

TEST_CASE("verify: a variant that does not get its verdict fails the task", "[verify]") {
  vf::VerifyTarget t = builtin("row_sum");
  for (sb::TaskVariant& v : t.variants)
    if (v.name == "wrong") v.source = t.spec.reference_source;  // a correct kernel where a wrong one is expected
  vf::VerifyOptions o;
  o.negatives = false;
  o.degeneracy = false;
  const vf::TaskReport r = vf::verify_task(t, cache(), o);
  const vf::CheckResult* c = check(r, "variant:wrong");
  REQUIRE(c != nullptr);
  CHECK_FALSE(c->ok);
  CHECK(c->detail.find("expected wrong_answer, got correct") != std::string::npos);
  CHECK(passed(r, "variant:fast"));
}

TEST_CASE("verify: the reduced timing size is deterministic, within its caps and ragged", "[verify]") {
  const sb::BuiltinTask* t = sb::find_builtin_task("matmul");
  REQUIRE(t != nullptr);
  const sb::Sizes a = vf::reduced_timing_sizes(t->spec), b = vf::reduced_timing_sizes(t->spec);
  CHECK(a == b);
  const vf::ReductionCaps caps;
  CHECK(sb::eval_size_expr(t->spec.library.flops, a) <= caps.flops);
  CHECK(sb::eval_size_expr(t->spec.library.bytes, a) <= caps.bytes);
  CHECK(a.at("M") * a.at("N") <= caps.output_elements);
  CHECK(a.at("K") > 16);  // still a real reduction
  for (const auto& [name, v] : a) CHECK((v <= 2 || v % 2 == 1));
}

TEST_CASE("verify: built-in rules name the missing library field", "[verify]") {
  const std::filesystem::path dir = std::filesystem::path(LEAP_VERIFY_TEST_CACHE) / "spec_rules" / "row_sum";
  std::filesystem::create_directories(dir);
  const sb::BuiltinTask* t = sb::find_builtin_task("row_sum");
  REQUIRE(t != nullptr);
  sb::TaskSpec spec = t->spec;
  spec.library.split.clear();
  std::ofstream(dir / "task.json") << sb::task_to_json(spec);
  std::ofstream(dir / "oracle.cpp") << t->oracle_source;
  const std::string path = (dir / "task.json").string();
  CHECK_NOTHROW(vf::load_target_file(path, false));  // a user's spec need not carry them
  CHECK_THROWS_WITH(vf::load_target_file(path, true), Catch::Contains("split: missing"));
}

TEST_CASE("verify: built-in rules hold a task to the folder of its category", "[verify]") {
  const sb::BuiltinTask* t = sb::find_builtin_task("row_sum");
  REQUIRE(t != nullptr);
  const std::filesystem::path root = std::filesystem::path(LEAP_VERIFY_TEST_CACHE) / "category_rules";
  for (const char* category : {"reduction", "norm"}) {
    const std::filesystem::path dir = root / category / "row_sum";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "task.json") << sb::task_to_json(t->spec);
    std::ofstream(dir / "oracle.cpp") << t->oracle_source;
  }
  CHECK_NOTHROW(vf::load_target_file((root / "reduction" / "row_sum" / "task.json").string(), true));
  const std::string misplaced = (root / "norm" / "row_sum" / "task.json").string();
  CHECK_NOTHROW(vf::load_target_file(misplaced, false));
  CHECK_THROWS_WITH(vf::load_target_file(misplaced, true),
                    Catch::Contains("category: \"reduction\", but the task is under norm/"));
}

TEST_CASE("verify: every built-in task sits in the folder of its category, with a unique name", "[verify]") {
  CHECK(sb::builtin_task_errors().empty());
  std::set<std::string> names;
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) CHECK(names.insert(t.spec.name).second);
  CHECK(names.size() >= 120);
}

TEST_CASE("verify: a reference or variant only the host compiler takes fails, as NVRTC would refuse it on the GPU",
          "[verify]") {
  vf::VerifyTarget t = builtin("row_sum");
  // g++ finds <vector> and the CPU runtime runs the kernel; NVRTC, as the GPU path compiles, has no such header.
  t.spec.reference_source = "#include <vector>\n" + t.spec.reference_source;
  for (sb::TaskVariant& v : t.variants)
    if (v.name == "fast" || v.name == "reference") v.source = "#include <vector>\n" + v.source;
  const vf::TaskReport r = vf::verify_task(t, cache());
  INFO(vf::to_text(r, false));
  const vf::CheckResult* ref = check(r, "compile:reference:nvrtc");
  REQUIRE(ref != nullptr);
  CHECK_FALSE(ref->ok);
  CHECK_THAT(ref->detail, Catch::Contains("NVRTC refused it") && Catch::Contains("vector"));
  const vf::CheckResult* reference_vs_oracle = check(r, "reference_vs_oracle");
  REQUIRE(reference_vs_oracle != nullptr);
  CHECK(reference_vs_oracle->ok);  // the CPU runtime took it
  const vf::CheckResult* fast = check(r, "variant:fast");
  REQUIRE(fast != nullptr);
  CHECK_FALSE(fast->ok);
  CHECK_THAT(fast->detail, Catch::Contains("expected correct, got compile_error: NVRTC refused it"));
  CHECK_FALSE(r.ok());
}
