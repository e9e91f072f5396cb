// SPDX-License-Identifier: Apache-2.0
// The outcome of one compile. A failed compile is a result like any other, never an exception.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leap::sandbox {

enum class CompileStatus {
  ok,       // PTX and/or CUBIN produced
  error,    // the compiler rejected the source; the log says why
  timeout,  // the time limit stopped the compile
  refused,  // the include jail (or the sandbox's input rules) rejected the source; nothing was compiled
  // A resource limit ended the compile (the address space) or refused what it produced (the PTX, the
  // CUBIN or its kernel list over CompilerConfig::output); `limit` says which, the log by how much
  resource_limit,
};

std::string_view to_string(CompileStatus status) noexcept;

struct CompileResult;
// The result as one JSON object: status, log, seconds, cache_hit, ptx_bytes, cubin_bytes, cpu_seconds,
// limit, unconfined, missing_layers, pch, kernels (the code itself stays out: a client that wants it links the
// library).
std::string to_json(const CompileResult& result);

// Which limit ended a compile (status timeout or resource_limit); none when it ran to its end.
enum class CompileLimit {
  none,
  cpu_time,       // the compile's own CPU time (the child's, plus the scan and hashing of its source)
  wall_clock,     // the generous wall-clock backstop (a child that sleeps or is stopped for long)
  address_space,  // RLIMIT_AS of the compile child
  idle,           // the compiler's CPU time stood still (stopped, deadlocked) for CompilerConfig::idle_limit
  // What the compile produced is over CompilerConfig::output (OutputLimits): the PTX, the CUBIN, the
  // number of kernels or their names' total length; the log names which. Checked where the compile ran,
  // so the module never reached the caller's process; status resource_limit, never cached.
  output_size,
};
std::string_view to_string(CompileLimit limit) noexcept;

// What NVRTC's automatic precompiled header did for a compile, as NVRTC itself reported it (a pooled
// pooled compiler keeps the PCH of the headers its candidates share; see CompilePoolSettings).
enum class PchUse {
  none,     // no PCH: not a pooled compile, a cache hit, or NVRTC neither used nor created one
  hit,      // NVRTC used a PCH an earlier compile in the same pooled compiler created ("using precompiled header")
  created,  // NVRTC created a PCH from this compile's headers (nvrtcGetPCHCreateStatus says so)
};
std::string_view to_string(PchUse pch) noexcept;

struct LoweredName {
  std::string expression;  // as given in CompileOptions::name_expressions
  std::string lowered;     // the mangled symbol to look up in the module
};

struct CompileResult {
  CompileStatus status = CompileStatus::error;
  std::string log;    // size-capped, host paths replaced by placeholders such as <cuda>
  std::string ptx;    // empty unless asked for and produced
  std::string cubin;  // raw ELF bytes; empty unless asked for and produced
  std::vector<LoweredName> lowered_names;
  double seconds = 0.0;      // wall time of this call (a cache hit reports the lookup time)
  double cpu_seconds = 0.0;  // CPU time charged to the limit: the compile child's, plus scanning and hashing the source
  CompileLimit limit = CompileLimit::none;
  // Compiled without the OS confinement: in-process (trusted sources) or a child with confinement
  // switched off. Every report of such a result says so.
  bool unconfined = false;
  // The confinement layers that were not in force for this compile, by name ("landlock", "seccomp",
  // "mount namespace", "rlimits", "process"); empty when every one was. Never empty for an unconfined
  // result, nor for one compiled with a weaker set the caller accepted (accept_weaker_confinement).
  std::vector<std::string> missing_layers;
  bool cache_hit = false;     // the cache answered; nothing was compiled
  PchUse pch = PchUse::none;  // never changes the output: the same bytes, log and status either way
  // NVRTC itself decided: it compiled the source, or rejected it with a compile error. False for a
  // compile child that died, a limit, an internal NVRTC failure: outcomes that say nothing about the
  // source. Only results with a verdict are cached.
  bool nvrtc_verdict = false;
  // The kernels (__global__ functions) the module defines, by symbol name as cuModuleGetFunction
  // takes it, read from the CUBIN's ELF symbol table. Empty optional when there is no CUBIN to read.
  std::optional<std::vector<std::string>> kernels;
  bool ok() const noexcept { return status == CompileStatus::ok; }
};

}  // namespace leap::sandbox
