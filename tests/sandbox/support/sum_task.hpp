// SPDX-License-Identifier: Apache-2.0
// A task for launch-plan tests: the sum of n floats into out[0], its reference one thread long, its
// size sets from 5 to 70 000 000 (so grid limits and products meet real sizes). `policy` is the
// task's "candidate_launch" member with its trailing comma, or empty for a fixed launch.
#pragma once

#include <leap/sandbox/task.hpp>
#include <string>

namespace leap_test {

inline leap::sandbox::TaskSpec sum_task(const std::string& policy = R"("candidate_launch": {"allowed": true},)") {
  return leap::sandbox::parse_task(R"json({
    "name": "sum", "entry": "sum",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": [1]},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "check_sizes": [{"n": 5}, {"n": 70000000}],
    "launch": {"grid": [1], "block": [256]}, )json" +
                                   policy + R"json(
    "reference": "extern \"C\" __global__ void sum(const float* x, float* out, int n) { if (threadIdx.x == 0) { float s = 0; for (int i = 0; i < n; ++i) s += x[i]; out[0] = s; } }"
  })json");
}

}  // namespace leap_test
