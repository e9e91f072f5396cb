// SPDX-License-Identifier: Apache-2.0
// The two halves of the driver probe behind leap::sandbox::probe_gpu: the one that loads the driver
// (in the process that runs it: the runner program, or a forked child where the program is missing)
// and the one that reads its report in the parent, which never loads the driver itself.
#pragma once

#include <string>

#include "leap/sandbox/driver_probe.hpp"

namespace leap::sandbox::detail {

// Loads `library`, calls cuInit and lists devices as "key value" lines.
std::string probe_driver_here(const std::string& library);
GpuStatus parse_driver_probe(const std::string& text);

}  // namespace leap::sandbox::detail
