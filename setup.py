# SPDX-License-Identifier: Apache-2.0
"""The parts of the package's build that pyproject.toml cannot hold: the C++ extension leap._core and
the version, read from include/leap/version.hpp (where CMake reads it too), so there is no second copy
to drift; and, before anything is built, what this interpreter lacks, named with the interpreter and the
fix (a bare ModuleNotFoundError said neither). Everything else is in pyproject.toml."""
import glob
import importlib.util
import os
import re
import sys

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


# What building needs in the interpreter that runs this file (pyproject.toml's build-system requires), and
# numpy, which the package needs to run and pip would otherwise try to download.
_BUILD_NEEDS = (("setuptools", "python3-setuptools"), ("wheel", "python3-wheel"), ("pybind11", "python3-pybind11"))
_RUN_NEEDS = (("numpy", "python3-numpy"),)


def _isolated() -> bool:
    """pip's build isolation (a temporary environment it installs the build requirements into) is in force."""
    return any("pip-build-env-" in entry for entry in sys.path)


def missing_requirements() -> list[tuple[str, str]]:
    """(module, Debian package) of each requirement this interpreter cannot import. numpy counts only without
    build isolation: with it, pip installs numpy itself after the build."""
    needs = _BUILD_NEEDS + (() if _isolated() else _RUN_NEEDS)
    return [(module, package) for module, package in needs if importlib.util.find_spec(module) is None]


def requirement_error(missing: list[tuple[str, str]]) -> str:
    """What is missing, in which interpreter, and the fixes (python/tests/test_packaging.py holds it to them)."""
    modules = ", ".join(module for module, _ in missing)
    version = ".".join(str(part) for part in sys.version_info[:3])
    return (f"leap: cannot build leap with {sys.executable} (Python {version}): it cannot import {modules}.\n"
            f"`pip install --no-build-isolation .` builds with the python3 that runs pip, so that interpreter needs "
            f"them. Either:\n"
            f"  - use Debian's python3, which has them once installed: apt-get install python3-dev "
            f"{' '.join(package for _, package in missing)} python3-venv python3-pip, then\n"
            f"      /usr/bin/python3 -m venv --system-site-packages .venv && .venv/bin/pip install --no-build-isolation .\n"
            f"    (a python3 found first on PATH, e.g. pyenv's, is another interpreter: name /usr/bin/python3);\n"
            f"  - or install them into this interpreter: {sys.executable} -m pip install {' '.join(m for m, _ in missing)}\n"
            f"  - or, with network access, leave out --no-build-isolation: pip then installs the build requirements "
            f"itself.")


def main() -> None:
    missing = missing_requirements()
    if missing:
        raise SystemExit(requirement_error(missing))
    from pybind11.setup_helpers import Pybind11Extension, build_ext
    from setuptools import setup

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
