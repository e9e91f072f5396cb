# SPDX-License-Identifier: Apache-2.0
"""What the package's two builds promise: the leap imported is the one this run means (the build tree
under CTest, the venv's site-packages under check_wheel.py), its version is include/leap/version.hpp's
(the one place it is written; CMake and setup.py read it there), the wheel installs the stubs and
py.typed, and a type checker reads leap's types from wherever leap is installed (PEP 561)."""
import importlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import leap
import leap._core as core

SOURCE = os.environ.get("LEAP_SOURCE_DIR")


def header_version():
    with open(os.path.join(SOURCE, "include", "leap", "version.hpp"), encoding="utf-8") as f:
        text = f.read()
    macros = [re.search(rf"^#define LEAP_VERSION_{p} ([0-9]+)$", text, re.MULTILINE).group(1)
              for p in ("MAJOR", "MINOR", "PATCH")]
    string = re.search(r'version_string = "([^"]+)"', text).group(1)
    return ".".join(macros), string


def test_leap_is_imported_from_where_this_run_expects():
    expected = os.environ.get("LEAP_EXPECTED_PACKAGE_DIR")
    if not expected:
        pytest.skip("LEAP_EXPECTED_PACKAGE_DIR is not set (run through CTest or check_wheel.py)")
    assert os.path.dirname(os.path.realpath(leap.__file__)) == os.path.realpath(expected)
    assert os.path.dirname(os.path.realpath(core.__file__)) == os.path.realpath(expected)


def test_the_version_is_the_headers():
    assert leap.__version__ == core.__version__
    if not SOURCE:
        pytest.skip("LEAP_SOURCE_DIR is not set (run through CTest or check_wheel.py)")
    from_macros, from_string = header_version()
    assert from_string == from_macros  # version.hpp's two spellings agree
    assert leap.__version__ == from_macros


def test_setup_py_reads_the_headers_version():
    if not SOURCE:
        pytest.skip("LEAP_SOURCE_DIR is not set (run through CTest or check_wheel.py)")
    importlib.import_module("pybind11.setup_helpers")  # python3-pybind11: setup.py imports it
    spec = importlib.util.spec_from_file_location("leap_setup", os.path.join(SOURCE, "setup.py"))
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # defines leap_version(); setup() runs only as __main__
    assert setup.leap_version() == header_version()[0]


def test_the_wheels_metadata_and_files():
    if not os.environ.get("LEAP_EXPECT_WHEEL"):
        pytest.skip("not the installed wheel (check_wheel.py sets LEAP_EXPECT_WHEEL)")
    distribution = importlib.metadata.distribution("leap")
    assert distribution.version == leap.__version__
    assert [r for r in distribution.requires] == ["numpy"]
    # verl imports every "verl.plugins" entry point as it is imported (verl-project/verl 1dda039,
    # verl/__init__.py:60-76): an installed leap registers its estimators in each of verl's processes.
    plugins = [e for e in distribution.entry_points if e.group == "verl.plugins"]
    assert [(e.name, e.value) for e in plugins] == [("leap", "leap.verl")]
    files = {str(f): f for f in distribution.files}
    for name in ("leap/__init__.py", "leap/_core.pyi", "leap/py.typed"):
        assert name in files, sorted(files)
    assert os.path.realpath(files["leap/__init__.py"].locate()) == os.path.realpath(leap.__file__)
    # Only the package: no sandbox, no C++ headers, no tests.
    assert all(name.startswith(("leap/", "leap-")) for name in files), sorted(files)
    assert any(re.fullmatch(r"leap/_core\..*\.so", name) for name in files)


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    """One cache for this file's mypy runs: the second reuses what the first learnt of numpy's stubs."""
    return tmp_path_factory.mktemp("mypy-cache")


def run_mypy(tmp_path, cache, source):
    importlib.import_module("mypy")  # python3-mypy
    program = tmp_path / "uses_leap.py"
    program.write_text(textwrap.dedent(source))
    # mypy finds leap on the interpreter's search path (site-packages, or PYTHONPATH for the build
    # tree) and, since leap has py.typed, reads its annotations and _core.pyi.
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), "--no-error-summary",
                           str(program)], capture_output=True, text=True, cwd=str(tmp_path))


def test_a_type_checker_reads_leaps_types(tmp_path, mypy_cache):
    run = run_mypy(tmp_path, mypy_cache, """\
        import leap

        outcomes = [leap.Outcome(solved_turn=1, best_verdict=leap.Verdict.correct), leap.Outcome()]
        advantages: list[float] = leap.rank_advantages_reference(outcomes, leap.KernelOrder.with_speedup(0.05))
        gate = leap.FailBandGate.leap_default(8)
        decision: leap.Expansion = gate.decide(3, 8)
        expansion, reason = gate.assess(leap.group_stats([leap.Verdict.timeout, leap.Verdict.correct]))
        reason_name: str = reason.name
        version: str = leap.__version__
        """)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_type_checker_finds_a_misuse_of_leap(tmp_path, mypy_cache):
    run = run_mypy(tmp_path, mypy_cache, """\
        import leap

        leap.turn_advantages("1.0", 3, 1, 0.9)
        leap.Outcome(solved_turns=1)
        count: str = leap.group_stats([]).n_fail
        """)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "uses_leap.py:3: error" in run.stdout and "[arg-type]" in run.stdout
    assert 'uses_leap.py:4: error: Unexpected keyword argument "solved_turns"' in run.stdout
    assert "uses_leap.py:5: error" in run.stdout and "[assignment]" in run.stdout


def test_an_interpreter_without_pybind11_and_numpy_gets_an_error_that_names_them(tmp_path):
    """`pip install --no-build-isolation .` from a venv made from a python3 that has neither pybind11 nor numpy
    (a pyenv interpreter first on PATH, or a bare venv as here): the error names the interpreter, what it
    lacks and the fix, instead of a bare ModuleNotFoundError."""
    if not SOURCE:
        pytest.skip("LEAP_SOURCE_DIR is not set (run through CTest or check_wheel.py)")
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)  # no system packages
    python = venv / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import numpy"], capture_output=True).returncode != 0
    source = tmp_path / "source"
    for item in ("pyproject.toml", "setup.py", "README.md", "include/leap", "python/leap", "python/src"):
        origin = os.path.join(SOURCE, item)
        copy = source / item
        if os.path.isdir(origin):
            shutil.copytree(origin, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, copy)
    run = subprocess.run([str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index",
                          "--disable-pip-version-check", "--no-cache-dir", str(source)],
                         capture_output=True, text=True, cwd=str(tmp_path), timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode != 0
    assert "cannot import" in output and "pybind11" in output and "numpy" in output, output
    assert str(venv / "bin" / "python") in output  # the interpreter pip ran under
    assert "/usr/bin/python3 -m venv --system-site-packages .venv && .venv/bin/pip install --no-build-isolation ." \
        in output
