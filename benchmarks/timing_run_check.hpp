// SPDX-License-Identifier: Apache-2.0
// bench_timing's verdict on one evaluation: a timing run proves something only when the kernel was
// correct and timed by the method expected (CUPTI, unless the run turned it off on purpose). Kept
// apart from the program so a CPU test holds the rule.
#pragma once

#include <leap/sandbox/evaluator.hpp>
#include <string>
#include <string_view>

namespace leap_bench {

// Empty when `r` is a correct, timed result whose both sides were measured by `expected_method`;
// else what is wrong with it, in a sentence.
inline std::string timing_run_failure(const leap::sandbox::EvalResult& r, std::string_view expected_method) {
  if (!r.verdict || *r.verdict != leap::Verdict::correct) {
    const std::string got = r.verdict ? std::string(leap::to_string(*r.verdict))
                                      : "no verdict (" + std::string(leap::sandbox::to_string(r.status)) + ")";
    return "not correct: " + got + (r.detail.empty() ? "" : ": " + r.detail) + r.error;
  }
  if (r.candidate.runs == 0) return "correct but not timed: " + r.speedup_unknown_detail;
  if (r.candidate.method != expected_method || r.reference.method != expected_method) {
    return "timed by " + r.candidate.method + "/" + r.reference.method + ", not " + std::string(expected_method) +
           (r.timing_note.empty() ? "" : ": " + r.timing_note);
  }
  return "";
}

}  // namespace leap_bench
