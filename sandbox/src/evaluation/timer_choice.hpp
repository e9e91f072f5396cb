// SPDX-License-Identifier: Apache-2.0
// Which clock times kernels, and why: CUPTI kernel activity (device timestamps of every kernel the
// launch ran) unless LEAP_SANDBOX_TIMER=events asks for CUDA events only, for machines where CUPTI
// misbehaves. The runner may still fall back to events at run time (each result's timing says so).
#pragma once

#include <string>

namespace leap::sandbox {

struct TimerChoice {
  std::string method;  // "cupti" or "events"
  std::string reason;  // one sentence
};

// Reads LEAP_SANDBOX_TIMER ("cupti", "events" or unset); any other value is reported, and ignored.
TimerChoice timer_choice();

}  // namespace leap::sandbox
