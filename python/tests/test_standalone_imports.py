# SPDX-License-Identifier: Apache-2.0
"""The trainer adapters stand alone: leap.trl and leap.openrlhf import neither verl (nor leap.verl, nor
leap.verl_agent) nor each other, so a verl that is broken or absent cannot break a TRL or an OpenRLHF
user. Each import runs in a fresh interpreter with a broken `verl` package first on the path (its
__init__ raises, as a verl built against another torch does)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

ADAPTERS = {
    "leap.trl": {"verl", "leap.verl", "leap.verl_agent", "leap.openrlhf"},
    "leap.openrlhf": {"verl", "leap.verl", "leap.verl_agent", "leap.trl"},
}


@pytest.fixture()
def broken_verl(tmp_path):
    package = tmp_path / "verl"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('this verl is broken (built against another torch)')\n")
    for part in ("trainer", "trainer/ppo", "experimental", "experimental/agent_loop"):
        (package / part).mkdir(parents=True, exist_ok=True)
        (package / part / "__init__.py").write_text("")
    (package / "trainer" / "ppo" / "core_algos.py").write_text("raise ImportError('broken core_algos')\n")
    return tmp_path


@pytest.mark.parametrize("module", sorted(ADAPTERS))
def test_an_adapter_imports_with_a_broken_verl_on_the_path(broken_verl, module):
    program = textwrap.dedent(f"""
        import json, sys
        import {module}
        print(json.dumps(sorted(m for m in sys.modules if m == "verl" or m.startswith(("verl.", "leap.")))))
    """)
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(broken_verl), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loaded = set(json.loads(run.stdout))
    assert not loaded & ADAPTERS[module], sorted(loaded & ADAPTERS[module])


def test_leap_verl_still_says_when_verl_is_broken(broken_verl):
    """The other side: leap.verl, which registers with verl, names verl's failure instead of passing it over."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(broken_verl), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", "import leap.verl"], env=environment, capture_output=True, text=True)
    assert run.returncode != 0
    assert "verl is installed" in run.stderr and "broken" in run.stderr
