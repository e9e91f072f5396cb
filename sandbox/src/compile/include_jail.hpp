// SPDX-License-Identifier: Apache-2.0
// The include jail: the scanner that enforces a CompilerConfig's IncludePolicy (compiler.hpp) before
// NVRTC sees a candidate, naming every refused construct with what to do.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compiler.hpp"  // IncludePolicy

namespace leap::sandbox {

// One refused construct, located, with what to do about it.
struct JailRefusal {
  std::string file;     // the source or shipped header it was found in
  int line = 0;         // 1-based
  std::string what;     // e.g. "#include <torch/extension.h>"
  std::string advice;   // e.g. "host-only: torch and pybind11 code is not run here; ..."; may be empty
  std::string include;  // the included name when the refusal is an #include, else empty
};

struct JailVerdict {
  bool allowed = true;
  // When refused: every refusal, one per line ("kernel.cu(3): #include <x>: what to do"), under a
  // first line that says how many. The same words go into the feedback a policy reads.
  std::string message;
  std::vector<JailRefusal> refusals;
  std::vector<std::string> includes;  // every header name the text includes (when allowed)
};

// What to do about an #include the policy refuses: remove a runtime header, drop host-only code,
// use the libcu++ form of a standard header, or ship the header. Used in the jail's messages.
std::string include_advice(std::string_view name, const IncludePolicy& policy);

// The message for a list of refusals, as JailVerdict::message holds it.
std::string format_refusals(std::span<const JailRefusal> refusals);

// Scans one translation-unit text the way the preprocessor will see it (line splices, comments,
// string and raw-string literals, digraphs) and refuses, naming every construct (not just the first):
//   * an #include whose operand is not a literal "name" or <name>, e.g. built by a macro;
//   * an included name that is neither shipped nor allowed by the policy (absolute, "..", anything else);
//   * #include_next, #import, #embed, #line or line markers with a file name, unknown directives;
//   * __has_include / __has_embed in any spelling (also wrapped, e.g. _CCCL_HAS_INCLUDE);
//   * #pragma, _Pragma and __pragma except a short allow-list (unroll, once, diagnostics, ...), and
//     _Pragma with anything but a string literal;
//   * trigraphs ??= and ??/, NUL bytes, unterminated comments.
JailVerdict scan_source(std::string_view text, std::string_view file_name, std::span<const Header> shipped,
                        const IncludePolicy& policy);

// Checks the source and every shipped header; the refusals of all of them in one verdict.
JailVerdict check_job(const CompileJob& job, const IncludePolicy& policy);

// True for a clean relative header name: [A-Za-z0-9_.+-/] only, no empty, "." or ".." segment.
bool is_clean_relative_name(std::string_view name) noexcept;

// Replaces every occurrence of each (prefix, placeholder) pair, longest prefix first.
struct PathScrub {
  std::string prefix;
  std::string placeholder;
};
std::string scrub_paths(std::string_view text, std::span<const PathScrub> scrubs);

}  // namespace leap::sandbox
