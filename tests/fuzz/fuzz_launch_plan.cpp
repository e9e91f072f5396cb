// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: launch-plan directives in a candidate's source. Neither the parser nor the
// checks may throw for any input; a plan that parses must survive its round trip through
// to_directives, and a plan the checks accept must resolve at the task's timing sizes.
#include <leap/sandbox/launch_plan.hpp>
#include <leap/sandbox/task.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sb = leap::sandbox;

namespace {

const sb::TaskSpec& task() {
  static const sb::TaskSpec t = sb::parse_task(R"json({
    "name": "sum", "entry": "sum",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": ["rows"]},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096, "rows": 7}, "check_sizes": [{"n": 5}],
    "launch": {"grid": [1], "block": [256]},
    "candidate_launch": {"allowed": true, "max_kernels": 16},
    "reference": "extern \"C\" __global__ void sum(const float*, float*, int) {}"})json");
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  const sb::PlanParse parsed = sb::parse_launch_plan(source);
  if (!parsed.ok() || parsed.plan.empty()) return 0;
  const std::string text = sb::to_directives(parsed.plan);
  const sb::PlanParse back = sb::parse_launch_plan(text);
  if (!back.ok() || sb::to_directives(back.plan) != text) std::abort();  // an accepted plan must read back as itself
  static const std::vector<std::string> module{"sum", "k", "partial_sums", "final_sum"};
  const sb::PlanCheck check = sb::check_candidate_plan(parsed.plan, task(), {&module, 101376});
  if (check.status == sb::PlanStatus::ok && !check.resolved) std::abort();
  if (check.status != sb::PlanStatus::ok && check.error.empty()) std::abort();
  return 0;
}
