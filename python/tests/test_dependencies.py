# SPDX-License-Identifier: Apache-2.0
"""Every package a Python test imports is one the README's first command and .ci/run install, so that on a
fresh machine `ctest -L python` runs every test (conftest.py turns a skip for want of a dependency into a
failure). The imports are read from the sources (each file's import statements, at any depth); a Debian
package holds each third-party module, which dpkg confirms where the module is Debian's."""
import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("LEAP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TESTS = SOURCE / "python" / "tests"

# The Debian package of each third-party module a test imports.
DEBIAN = {
    "numpy": "python3-numpy", "pytest": "python3-pytest", "torch": "python3-torch", "omegaconf": "python3-omegaconf",
    "redis": "python3-redis", "mypy": "python3-mypy", "pybind11": "python3-pybind11", "setuptools": "python3-setuptools",
    "wheel": "python3-wheel", "yaml": "python3-yaml",
}
# Trainers and their libraries the tests write models of (verl_model, trl_model, openrlhf_model) or stand in
# for in sys.modules: never installed, never imported from the machine.
MODELLED = {"verl", "trl", "accelerate", "openrlhf", "ray", "transformers", "vllm"}


def local_modules():
    return {p.stem for p in TESTS.glob("*.py")} | {"leap"}


def imported_modules(path):
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def third_party_imports():
    """{module: [files]} over python/tests: neither the standard library, nor leap, nor the tests' own modules,
    nor a modelled trainer."""
    stdlib = set(sys.stdlib_module_names)
    local = local_modules()
    modules = {}
    for path in sorted(TESTS.glob("*.py")):
        for module in imported_modules(path) - stdlib - local - MODELLED - {"__future__"}:
            modules.setdefault(module, []).append(path.name)
    return modules


def readme_packages():
    """The packages the README's first command installs (its apt-get install)."""
    text = (SOURCE / "README.md").read_text()
    first = re.search(r"```sh\n(.*?)\n```", text, re.S).group(1)
    words = shlex.split(first.split("apt-get install", 1)[1].split("&&", 1)[0])
    return {w for w in words if not w.startswith("-")}


def ci_packages():
    text = (SOURCE / ".ci" / "run").read_text()
    listed = re.search(r"packages=\((.*?)\)", text, re.S).group(1)
    return set(listed.split())


def test_every_test_import_is_a_package_the_commands_install():
    modules = third_party_imports()
    unknown = {m: files for m, files in modules.items() if m not in DEBIAN}
    assert not unknown, f"imports with no Debian package in DEBIAN: {unknown}"
    needed = {DEBIAN[m] for m in modules}
    assert "python3-omegaconf" in needed  # verl's config is omegaconf's
    assert not needed - readme_packages(), f"the README's first command does not install {sorted(needed - readme_packages())}"
    assert not needed - ci_packages(), f".ci/run does not install {sorted(needed - ci_packages())}"


def test_each_module_comes_from_its_package():
    """dpkg -S names the package a Debian module's file belongs to: the table says what the machine says."""
    if shutil.which("dpkg") is None:
        pytest.skip("not a Debian machine (no dpkg): the package names cannot be checked")  # not a dependency
    import importlib.util
    for module in third_party_imports():
        spec = importlib.util.find_spec(module)
        assert spec is not None, f"{module} is not installed: apt-get install {DEBIAN[module]}"
        origin = spec.origin or (list(spec.submodule_search_locations or []) or [None])[0]
        if not origin or not origin.startswith("/usr/"):
            continue  # a virtual environment's or a user's copy: nothing for dpkg to say
        owner = subprocess.run(["dpkg", "-S", origin], capture_output=True, text=True)
        assert owner.returncode == 0 and owner.stdout.split(":", 1)[0].split(",")[0].strip() == DEBIAN[module], \
            (module, origin, owner.stdout, owner.stderr)


def run_pytest(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(folder)],
                          capture_output=True, text=True, cwd=folder)


def test_a_skip_for_want_of_a_dependency_fails(tmp_path):
    """conftest.py turns pytest.importorskip's skip into a failure, at collection and in a test; a skip for the
    GPU stays a skip."""
    at_collection, in_test = tmp_path / "collection", tmp_path / "test"
    for folder in (at_collection, in_test):
        folder.mkdir()
        (folder / "conftest.py").write_text((TESTS / "conftest.py").read_text())
    (at_collection / "test_module.py").write_text("import pytest\npytest.importorskip('no_module_called_this')\n"
                                                  "def test_a():\n    pass\n")
    (in_test / "test_inside.py").write_text("import pytest\ndef test_b():\n    pytest.importorskip('no_module_either')\n"
                                            "def test_gpu():\n    pytest.skip('no GPU here')\n")
    run = run_pytest(at_collection)
    assert run.returncode != 0 and "ERROR" in run.stdout and "must not skip for want of a dependency" in run.stdout, \
        run.stdout
    run = run_pytest(in_test)
    assert run.returncode != 0 and "1 failed, 1 skipped" in run.stdout, run.stdout
    assert "must not skip for want of a dependency" in run.stdout and "no GPU here" in run.stdout
