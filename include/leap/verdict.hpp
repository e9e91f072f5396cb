// SPDX-License-Identifier: Apache-2.0
// Verdict: how far one candidate kernel got through compile -> run -> check.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace leap {

// Declared from least to most advanced, so `a < b` means "b got further than a".
enum class Verdict : std::uint8_t { compile_error, runtime_error, timeout, wrong_answer, correct };

inline constexpr std::array<Verdict, 5> all_verdicts = {Verdict::compile_error, Verdict::runtime_error,
                                                        Verdict::timeout, Verdict::wrong_answer, Verdict::correct};

// The verdict's name as written in code and JSON: "compile_error", ..., "correct".
constexpr std::string_view to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::compile_error: return "compile_error";
    case Verdict::runtime_error: return "runtime_error";
    case Verdict::timeout: return "timeout";
    case Verdict::wrong_answer: return "wrong_answer";
    case Verdict::correct: return "correct";
  }
  return "unknown";
}

// The inverse of to_string; nullopt for any other text.
constexpr std::optional<Verdict> verdict_from_string(std::string_view name) noexcept {
  for (Verdict verdict : all_verdicts) {
    if (to_string(verdict) == name) return verdict;
  }
  return std::nullopt;
}

// Failure severity for the ranking's optional severity key: a wrong answer is closest to working,
// a crash and a hang are equally far, a compile error is furthest. Higher is better.
constexpr int failure_severity_rank(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::compile_error: return 0;
    case Verdict::runtime_error:
    case Verdict::timeout: return 1;
    case Verdict::wrong_answer: return 2;
    case Verdict::correct: return 3;
  }
  return 0;
}

}  // namespace leap
