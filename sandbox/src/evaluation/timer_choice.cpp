// SPDX-License-Identifier: Apache-2.0
#include "evaluation/timer_choice.hpp"

#include <cstdlib>
#include <string_view>

namespace leap::sandbox {

TimerChoice timer_choice() {
  const char* env = std::getenv("LEAP_SANDBOX_TIMER");
  const std::string_view v = env != nullptr ? env : "";
  if (v == "events") return {"events", "LEAP_SANDBOX_TIMER=events: CUDA events around each launch, CUPTI left off"};
  if (v.empty() || v == "cupti") {
    return {"cupti",
            "CUPTI kernel activity matched to launches by external correlation id (LEAP_SANDBOX_TIMER=events "
            "switches to CUDA events); events stand in for any run CUPTI fails to report"};
  }
  return {"cupti",
          "LEAP_SANDBOX_TIMER='" + std::string(v) + "' is neither 'cupti' nor 'events' and was ignored; using CUPTI"};
}

}  // namespace leap::sandbox
