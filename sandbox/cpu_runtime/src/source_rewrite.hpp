// SPDX-License-Identifier: Apache-2.0
// The module compiler's middle step, on the preprocessed source (prelude.hpp turned __global__ into
// __leap_cpu_global__ and __shared__ into __leap_cpu_shared__):
//
//   kernels   every __leap_cpu_global__ function at namespace scope that is not a template is listed
//             (qualified by its named namespaces) and the marker removed; the footer's table refers
//             to each by that name
//   shared    each declaration with __leap_cpu_shared__ becomes a typedef of its own type and a
//             reference into the block's shared memory (leap_cpu/shared.hpp shows the form), on the
//             same lines, so that diagnostics and source locations keep their line numbers
//   footer    the module's table and its attach function (leap_cpu/kernel_table.hpp)
//
// A declaration the rewrite cannot take (a __shared__ variable at namespace scope, or with an
// initialiser) is refused with the file and line, as the compiler's diagnostics are written.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leap::cpu_runtime::detail {

struct RewriteResult {
  bool ok = false;
  std::string text;                  // the source to compile, footer included
  std::vector<std::string> kernels;  // qualified names, in source order
  std::string error;                 // "file:line: what" when !ok
};

RewriteResult rewrite_module_source(std::string_view preprocessed);

}  // namespace leap::cpu_runtime::detail
