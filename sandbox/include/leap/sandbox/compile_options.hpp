// SPDX-License-Identifier: Apache-2.0
// What to compile and how. Options come from the harness (trusted); the source and the headers a task
// ships come from the model (untrusted) and go through the include jail.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace leap::sandbox {

struct Define {
  std::string name;   // a C identifier
  std::string value;  // may be empty; one line of plain tokens (no quotes, backslashes or '#')
};

// A header handed to the compiler in memory; `#include "name"` (or <name>) resolves to it first.
struct Header {
  std::string name;  // a relative path: [A-Za-z0-9_.+-/], no "..", no leading '/'
  std::string content;
};

struct CompileOptions {
  std::string arch = "sm_90";   // sm_XY[a|f] gives CUBIN (and PTX when asked); compute_XY[a|f] gives PTX only
  int cxx_standard = 17;        // 11, 14, 17 or 20
  bool fast_math = false;       // --use_fast_math
  bool line_info = false;       // --generate-line-info
  bool default_device = false;  // -default-device: unannotated functions and globals are __device__
  int max_registers = 0;        // --maxrregcount; 0 = compiler's choice
  bool want_ptx = true;
  bool want_cubin = true;  // ignored for compute_ archs
  std::vector<Define> defines;
  std::vector<std::string> name_expressions;  // e.g. "scale<float, 4>"; lowered names come back in order
  // The compile's CPU time limit: the compile child's CPU time plus the scan and hashing of the source.
  // Time spent queued, or waiting for a busy machine's cores, does not count.
  std::chrono::milliseconds timeout{10000};
  // Wall-clock backstop: the time a compile process may spend neither running, waiting for a CPU nor in
  // the disk (stalled, stopped), so an oversubscribed machine never ends an honest compile; its wall
  // clock in all is capped at 10 x this. 0 = 10 x timeout. The in-process path counts all wall time.
  std::chrono::milliseconds wall_backstop{0};
  std::size_t max_log_bytes = 64 * 1024;  // longer logs are cut, with a note saying so
};

// Throws std::invalid_argument naming the offending option and value.
void validate(const CompileOptions& options);

struct CompileJob {
  std::string source;
  std::vector<Header> headers;  // shipped by the task; also checked by the jail
  CompileOptions options;
  std::string file_name = "kernel.cu";  // the name diagnostics use; same rules as Header::name
};

}  // namespace leap::sandbox
