# SPDX-License-Identifier: Apache-2.0
"""The parts of the package's build that pyproject.toml cannot hold: the C++ extension leap._core and
the version, read from include/leap/version.hpp (where CMake reads it too), so there is no second copy
to drift. Everything else is in pyproject.toml."""
import glob
import os
import re

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

# setuptools' intermediate files (objects, the staged package, the egg-info) go under build/, which
# git ignores, beside CMake's build/<preset> folders, instead of into python/ and the repository root.
_BUILD_BASE = os.path.join("build", "python-setuptools")


def leap_version() -> str:
    """The version the C++ header defines (python/tests/test_packaging.py holds the package to it)."""
    root = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(root, "include", "leap", "version.hpp"), encoding="utf-8") as header:
        text = header.read()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        match = re.search(rf"^#define LEAP_VERSION_{part} ([0-9]+)$", text, re.MULTILINE)
        if match is None:
            raise RuntimeError(f"include/leap/version.hpp has no '#define LEAP_VERSION_{part} <number>' line")
        parts.append(match.group(1))
    return ".".join(parts)


def main() -> None:
    os.makedirs(_BUILD_BASE, exist_ok=True)
    setup(
        version=leap_version(),
        ext_modules=[
            Pybind11Extension(
                "leap._core",
                sources=["python/src/module.cpp"],
                # The header-only core and the bindings' own headers; the module uses neither Eigen nor
                # nlohmann/json (those are opt-in headers of the core), so nothing else is needed.
                include_dirs=["include", "python/src"],
            # setuptools rebuilds the module when one of these is newer than it: without them a changed
            # header alone would leave an earlier build's module in place.
            depends=sorted(glob.glob("include/leap/**/*.hpp", recursive=True) + glob.glob("python/src/*.hpp")),
                cxx_std=20,
                # leap's thread pool uses std::thread; -pthread keeps that right on a libc where the
                # threads library is still separate.
                extra_compile_args=["-pthread"],
                extra_link_args=["-pthread"],
            )
        ],
        cmdclass={"build_ext": build_ext},
        options={"build": {"build_base": _BUILD_BASE}, "egg_info": {"egg_base": _BUILD_BASE}},
    )


# setuptools runs this file as __main__ (pip through setuptools.build_meta, or `python3 setup.py`);
# the tests import it for leap_version() without building anything.
if __name__ == "__main__":
    main()
