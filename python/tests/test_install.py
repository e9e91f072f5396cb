# SPDX-License-Identifier: Apache-2.0
"""`cmake --install` puts the package where PYTHONPATH=<prefix>/<LEAP_PYTHON_INSTALL_DIR> finds it, and
the installed copy works on its own (nothing read from the build tree)."""
import os
import shutil
import subprocess
import sys

import pytest


def test_installed_package_imports_from_the_prefix(tmp_path):
    build = os.environ.get("LEAP_BUILD_DIR")
    relative = os.environ.get("LEAP_PYTHON_INSTALL_DIR")
    if not build or not relative:
        pytest.skip("LEAP_BUILD_DIR / LEAP_PYTHON_INSTALL_DIR are not set (run through CTest)")
    prefix = tmp_path / "prefix"
    subprocess.run([shutil.which("cmake") or "cmake", "--install", build, "--prefix", str(prefix), "--component", "python"],
                   check=True, capture_output=True)
    site = prefix / relative
    assert (site / "leap" / "__init__.py").is_file()
    # The stubs and the PEP 561 marker, as in the wheel: type checkers read leap's types from here.
    assert (site / "leap" / "_core.pyi").is_file() and (site / "leap" / "py.typed").is_file()
    program = ("import leap, leap.verl, leap.sandbox, numpy as np; "
               "assert leap.__file__.startswith(%r), leap.__file__; "
               "print(leap.__version__, leap.rank_advantages(np.array([1, 0]), np.array([0, 0])).tolist())" % str(site))
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment["PYTHONPATH"] = str(site)
    run = subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split(" ", 1)[1].strip() == "[1.0, -1.0]"
