// SPDX-License-Identifier: Apache-2.0
// One NVRTC compile on the calling thread, from a request that holds everything NVRTC is given, so a
// compile child or a pooled compiler runs the same code the trusted in-process path does.
#pragma once

#include <time.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox::detail {

struct NvrtcRequest {
  std::string source;
  std::string file_name;
  std::vector<Header> headers;     // in-memory headers (the task's and the compatibility stand-ins)
  std::vector<std::string> flags;  // nvrtc_flags(options) and the include paths
  std::vector<std::string> name_expressions;
  bool want_ptx = true;
  bool want_cubin = false;
  // Checked against the sizes NVRTC reports before the code is copied out of it, so a module over a
  // limit never leaves the compile process: the result is an output_size limit (output_limits.hpp).
  OutputLimits limits;
  // Automatic PCH in this directory (created if missing); empty = no PCH. The directory must be
  // private to one set of in-memory headers and flags: NVRTC checks the options and the directive
  // prefix before reusing a PCH, but not the contents of in-memory headers (a PCH made with one
  // "task.h" is used for a different "task.h" of the same name).
  std::string pch_dir;
  // A stored PCH (pch_store.hpp) to use, by its path as the compile process sees it; empty = none.
  // Authenticated by the parent before the request is sent. A compile that does not use it (NVRTC
  // refused it, or it is gone) is compiled again without it, so the result never depends on it.
  std::string use_pch;
  // The source as a compile with `use_pch` is given it: `source` with the repeats of guarded headers in
  // its leading includes blanked line for line (leading_includes.hpp), so that the PCH's directives
  // start it. Empty: `source` itself. A compile without the PCH is always given `source`.
  std::string pch_source;
  // A pooled compiler that creates a stored PCH: the file name (no directory) to write it to in its
  // scratch directory; empty = none.
  std::string create_pch;
};

NvrtcRequest make_nvrtc_request(const CompileJob& job, const std::vector<std::string>& include_dirs,
                                const OutputLimits& limits = {});

// The key naming a request's PCH directory: a digest of its in-memory headers and its flags.
std::string pch_key(const NvrtcRequest& request);

// Stopped by NVRTC's flow callback once `clock` passes `cpu_budget` from now or the wall deadline
// passes. The log is raw (unscrubbed, uncapped), with NVRTC's PCH messages taken out and reported in
// `pch` instead, so the log reads the same with and without a PCH.
CompileResult nvrtc_compile(const NvrtcRequest& request, clockid_t clock, std::chrono::nanoseconds cpu_budget,
                            std::chrono::steady_clock::time_point wall_deadline);

// The PCH lines NVRTC writes with --pch-messages for `file_name`, taken out of `log`; says which.
PchUse take_pch_messages(std::string& log, std::string_view file_name, std::string_view pch_dir);

// A self-delimiting binary form of a request, for a pooled compiler's pipe.
std::string encode_request(const NvrtcRequest& request);
std::optional<NvrtcRequest> decode_request(std::string_view bytes);

}  // namespace leap::sandbox::detail
