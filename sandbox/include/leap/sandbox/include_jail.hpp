// SPDX-License-Identifier: Apache-2.0
// The include jail: which headers a candidate may include, and the scanner that enforces it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_options.hpp"

namespace leap::sandbox {

struct IncludePolicy {
  std::vector<std::string> headers;   // exact names, e.g. "cuda_fp16.h"
  std::vector<std::string> prefixes;  // directories, e.g. "cuda/std/" allows "cuda/std/cstdint"
  // The toolkit headers a kernel commonly needs: cuda_fp16/bf16/fp8 and friends, mma.h,
  // cooperative_groups, and libcu++ under cuda/.
  static IncludePolicy cuda_defaults();
  static IncludePolicy none() { return {}; }  // shipped headers only
  bool allows(std::string_view name) const;   // also requires a clean relative name
};

struct JailVerdict {
  bool allowed = true;
  std::string message;  // when refused: which file, which line, what, and why
  std::vector<std::string> includes;  // every header name the text includes (when allowed)
};

// Scans one translation-unit text the way the preprocessor will see it (line splices, comments,
// string and raw-string literals, digraphs) and refuses, naming the construct:
//   * an #include whose operand is not a literal "name" or <name>, e.g. built by a macro;
//   * an included name that is neither shipped nor allowed by the policy (absolute, "..", anything else);
//   * #include_next, #import, #embed, #line or line markers with a file name, unknown directives;
//   * __has_include / __has_embed in any spelling (also wrapped, e.g. _CCCL_HAS_INCLUDE);
//   * #pragma, _Pragma and __pragma except a short allow-list (unroll, once, diagnostics, ...), and
//     _Pragma with anything but a string literal;
//   * trigraphs ??= and ??/, NUL bytes, unterminated comments.
JailVerdict scan_source(std::string_view text, std::string_view file_name, std::span<const Header> shipped,
                        const IncludePolicy& policy);

// Checks the source and every shipped header.
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
