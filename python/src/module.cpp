// SPDX-License-Identifier: Apache-2.0
// leap._core: the pybind11 module behind the Python package `leap`. The public Python API lives in
// python/leap/ (which wraps the private entry points here with torch support and hashable ids).
#include <pybind11/pybind11.h>

#include "bind_advantages.hpp"
#include "bind_rollout.hpp"
#include "bind_types.hpp"
#include "leap/version.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "leap's C++ core: rank-based advantages, baselines, turn credit, DCP gates and the rollout loop";
  m.attr("__version__") = leap::version_string;
  leap::python::bind_types(m);
  leap::python::bind_advantages(m);
  leap::python::bind_rollout(m);
}
