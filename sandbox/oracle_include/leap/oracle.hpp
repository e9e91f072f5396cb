// SPDX-License-Identifier: Apache-2.0
// An oracle is a task's second opinion: plain C++ in double precision, written apart from the
// task's reference.cu, that computes the same outputs from the same inputs. `leap-sandbox tasks
// verify` compiles it with the host compiler and checks the reference against it; a reference with
// a wrong index or a missing barrier then disagrees with something written independently of it.
//
//     #include <leap/oracle.hpp>
//     LEAP_ORACLE(problem) {
//         const auto n = problem.size("n");
//         const auto x = problem.in("x");
//         auto out = problem.out("out");
//         for (std::int64_t i = 0; i < n; ++i) out[i] = 2.0 * x[i];
//     }
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace leap::oracle {

// One size set and one draw of the inputs, as the verifier hands them to an oracle. A name that
// the task does not declare throws std::invalid_argument naming it.
class Problem {
public:
    virtual ~Problem() = default;

    // A size from the size set: `sizes` with a check set's overrides.
    virtual std::int64_t size(std::string_view name) const = 0;
    // A scalar parameter's value (an int32 scalar exactly).
    virtual double scalar(std::string_view name) const = 0;
    // An `in` buffer's drawn elements, each converted exactly to double, in row-major order.
    virtual std::span<const double> in(std::string_view name) const = 0;
    // An `out` buffer, sized from its shape and zero-filled: the oracle writes every element. An
    // `inout` buffer arrives holding its drawn values.
    virtual std::span<double> out(std::string_view name) = 0;
};

}  // namespace leap::oracle

// Defines the oracle's entry point; the body reads and writes through `problem`. Visible whatever
// the compile's default visibility: the verifier finds it with dlsym.
#define LEAP_ORACLE(problem) \
  extern "C" __attribute__((visibility("default"))) void leap_oracle_run(::leap::oracle::Problem& problem)
