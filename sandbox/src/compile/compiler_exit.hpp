// SPDX-License-Identifier: Apache-2.0
// How the end of a compiler process reads in its result, in the words a one-shot compile child and
// a pooled compiler share: which limit stopped it, or how it died. Internal.
#pragma once

#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "compile/compile_child.hpp"
#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox::detail {

std::string milliseconds_text(std::chrono::nanoseconds d);
double seconds_of(const timeval& tv);
std::chrono::nanoseconds cpu_of(clockid_t clock);  // zero when the clock cannot be read
std::optional<clockid_t> cpu_clock_of(pid_t pid);  // a process's CPU clock, when the kernel gives one
// The one-letter state of a process in /proc/PID/stat ('R' runnable, 'S' sleeping, 'D' disk, 'T'
// stopped, 'Z' exited...), or 0 when it cannot be read.
char process_state(pid_t pid) noexcept;

// NVRTC's flow callback stopped the compile between phases (status timeout): the result says it was
// the CPU limit, before whatever NVRTC logged.
void mark_stopped_at_cpu_limit(CompileResult& result, const ChildBudget& budget);

// A compiler process that gave no result. `killed_for` is the limit the parent enforced (none when
// it did not kill it), `wait_status` what waitpid reported, `cpu_seconds` the CPU the compile used,
// `address_space_bytes` its limit (for the message). Sets status, limit and log; RLIMIT_CPU's end
// (SIGXCPU, or SIGKILL past the budget) counts as the CPU limit. An idle end says for how long the
// compiler made no progress.
CompileResult ended_without_result(int wait_status, CompileLimit killed_for, double cpu_seconds,
                                   const ChildBudget& budget, std::uint64_t address_space_bytes);

}  // namespace leap::sandbox::detail
