# SPDX-License-Identifier: Apache-2.0
"""The wheel, end to end and offline (CTest's python:wheel):

1. pip builds a wheel (`pip wheel --no-build-isolation --no-deps --no-index`) from a copy of only the
   files the Python build declares it needs (pyproject.toml, setup.py, README.md, include/leap,
   python/leap, python/src): no CMake file and no sandbox source is there to be used;
2. a fresh virtual environment is made with --system-site-packages: nothing can be downloaded, so
   numpy, torch, pytest and mypy come from Debian's packages, as the wheel's users' would come from
   their own environment (the wheel itself is the only thing installed into the venv);
3. the venv's pip installs the wheel (--no-index: numpy, its one dependency, is found, not fetched);
4. the package's pytest tests run under the venv's python, from a directory with no leap in it, with
   LEAP_EXPECTED_PACKAGE_DIR naming the venv's site-packages, so that test_packaging.py fails unless
   the leap imported is the installed one.

Fails, naming them, when a tool it needs is not installed: python3-venv, python3-pip, python3-setuptools,
python3-wheel, python3-pybind11 (the README's first command and .ci/run install them all).

    python3 check_wheel.py --source <repository> --work <scratch folder>
"""
import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time

# What setup.py and pyproject.toml read; a build that needs anything else fails here.
BUILD_INPUTS = ["pyproject.toml", "setup.py", "README.md", "include/leap", "python/leap", "python/src"]


def run(command, **options):
    started = time.monotonic()
    print("+", " ".join(command), flush=True)
    completed = subprocess.run(command, **options)
    print(f"  ({time.monotonic() - started:.1f} s)", flush=True)
    if completed.returncode != 0:
        sys.exit(f"failed with exit status {completed.returncode}: {' '.join(command)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True, help="the repository's root")
    parser.add_argument("--work", required=True, help="a scratch folder (emptied first)")
    arguments = parser.parse_args()

    missing = [m for m in ("venv", "ensurepip", "pip", "setuptools", "wheel", "pybind11")
               if importlib.util.find_spec(m) is None]
    if missing:
        print(f"{sys.executable} lacks {', '.join(missing)}: apt-get install python3-venv python3-pip "
              "python3-setuptools python3-wheel python3-pybind11 (the README's first command installs them)")
        return 1

    source, work = os.path.abspath(arguments.source), os.path.abspath(arguments.work)
    shutil.rmtree(work, ignore_errors=True)
    stage, dist, venv, run_dir = (os.path.join(work, d) for d in ("source", "dist", "venv", "run"))
    for folder in (stage, dist, run_dir):
        os.makedirs(folder)
    for item in BUILD_INPUTS:
        origin, copy = os.path.join(source, item), os.path.join(stage, item)
        if os.path.isdir(origin):
            shutil.copytree(origin, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, copy)

    # pip's cache is left alone (--no-cache-dir): a wheel cached by an earlier build must not stand in
    # for this one, and CI's home folder is not written to.
    pip_options = ["--no-cache-dir", "--no-index", "--disable-pip-version-check"]
    build_environment = dict(os.environ)
    launcher = os.environ.get("LEAP_COMPILER_LAUNCHER")
    if launcher and shutil.which(launcher) and "CC" not in os.environ and "CXX" not in os.environ:
        # The build's compiler launcher (ccache), as CMake uses it: the copy lies at the same path on
        # each run, so an unchanged module is not compiled again. setuptools takes CC/CXX as commands.
        for variable in ("CC", "CXX"):
            build_environment[variable] = f"{launcher} {sysconfig.get_config_var(variable)}"
    run([sys.executable, "-m", "pip", "wheel", *pip_options, "--no-build-isolation", "--no-deps", stage, "-w", dist],
        env=build_environment)
    wheels = [f for f in os.listdir(dist) if f.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {dist}, found {wheels}")
    wheel = os.path.join(dist, wheels[0])
    print(f"wheel: {wheels[0]} ({os.path.getsize(wheel) // 1024} KiB)")

    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    python = os.path.join(venv, "bin", "python")
    run([python, "-m", "pip", "install", *pip_options, wheel])
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    if not site.startswith(venv):
        sys.exit(f"the venv's site-packages {site} is not inside {venv}")

    environment = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "LEAP_BUILD_DIR", "LEAP_PYTHON_INSTALL_DIR")}
    environment["LEAP_EXPECTED_PACKAGE_DIR"] = os.path.join(site, "leap")
    environment["LEAP_EXPECT_WHEEL"] = "1"
    environment["LEAP_SOURCE_DIR"] = source
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    tests = os.path.join(source, "python", "tests")
    run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", tests], cwd=run_dir, env=environment)
    return 0


if __name__ == "__main__":
    sys.exit(main())
