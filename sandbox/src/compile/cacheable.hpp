// SPDX-License-Identifier: Apache-2.0
// Which compile results the cache keeps, in either tier.
#pragma once

#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox::detail {

// NVRTC's own verdicts only: a child killed by a signal, a limit, an internal failure is not a
// property of the source and must not be replayed to every later compile of it.
inline bool cacheable(const CompileResult& r) noexcept {
  return (r.status == CompileStatus::ok || r.status == CompileStatus::error) && r.nvrtc_verdict && !r.cache_hit;
}

}  // namespace leap::sandbox::detail
