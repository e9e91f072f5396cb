// SPDX-License-Identifier: Apache-2.0
// The stages the GPU runner announces in stage frames (frames.hpp) while it works on a request: the
// step running now, so that a timeout or a death is blamed on the candidate or on the harness, and
// so that the parent knows when set-up ends and the request's own time limit starts. The one place
// their names are spelled. Internal.
#pragma once

#include <string>
#include <string_view>

namespace leap::sandbox::detail::stage {

// Set-up of a fresh runner: driver, context, CUPTI. Runs under GpuRunnerConfig::init_timeout.
inline constexpr std::string_view init = "init";
// Set-up is over: the request's time limit runs from here.
inline constexpr std::string_view ready = "ready";
// Loading the candidate's module (its static initialisers and module-scope code run here).
inline constexpr std::string_view load = "load";
// Loading the candidate's module again before timing: its __device__ globals do not carry over.
inline constexpr std::string_view reload = "reload";
// A correctness trial of one side, then the comparison of its outputs.
inline constexpr std::string_view candidate = "candidate";
inline constexpr std::string_view reference = "reference";
inline constexpr std::string_view check = "check";
// The test operations' own stages (a runner that hangs, a runner that dies).
inline constexpr std::string_view sleeping = "sleeping";
inline constexpr std::string_view crashing = "crashing";

// Warm-up and timed runs of one side: "warmup:candidate", "timing:reference".
inline std::string warmup(std::string_view side) { return "warmup:" + std::string(side); }
inline std::string timing(std::string_view side) { return "timing:" + std::string(side); }

// The stages in which the candidate's own code is what runs: a timeout there is the candidate's,
// anywhere else the harness's.
inline bool is_candidate_stage(std::string_view s) {
  return s == load || s == candidate || s == reload || s == warmup(candidate) || s == timing(candidate);
}

}  // namespace leap::sandbox::detail::stage
