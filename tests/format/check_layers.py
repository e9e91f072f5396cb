#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The sandbox's internal folders depend on each other in one direction only.

Each folder under sandbox/src is declared below with the folders it may include from; a source that
includes from any other folder is a finding, named by file, line and the two folders. The declared
graph itself must have no cycle (so no folder both uses and is used by another), and a folder that is
not declared is a finding: a new folder says where it sits. `leap/...` (the public headers) may be
included from anywhere. Exit 1 on a finding.
"""
import pathlib
import re
import shutil
import sys
import tempfile

# folder -> the folders it may include from, lowest layer first.
LAYERS = {
    "common": set(),
    "confinement": {"common"},
    "task_spec": {"common"},
    "runner_pipe": {"common"},
    "compile": {"common", "confinement"},
    "evaluation": {"common", "confinement", "compile", "task_spec", "runner_pipe"},
    "serve": {"common", "compile", "evaluation", "task_spec"},
    "fleet": {"common", "serve"},
    "verify": {"common", "task_spec", "evaluation"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def cycle_in(graph):
    """A cycle in the declared graph, as a list of folders, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path + [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def check(root, layers=LAYERS):
    """Every finding under root, as lines of text."""
    src = root / "sandbox" / "src"
    findings = []
    cycle = cycle_in(layers)
    if cycle:
        findings.append("the declared layers have a cycle: " + " -> ".join(cycle))
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        if folder.name not in layers:
            findings.append(f"sandbox/src/{folder.name}/ is not declared in tests/format/check_layers.py: say which "
                            f"folders it may include from")
            continue
        allowed = layers[folder.name] | {folder.name, "leap"}
        for source in sorted(folder.rglob("*")):
            if source.suffix not in (".cpp", ".hpp", ".inc", ".in") or not source.is_file():
                continue
            for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) not in allowed and (src / m.group(1)).is_dir():
                    findings.append(f"{source.relative_to(root)}:{number}: {folder.name}/ includes from "
                                    f"{m.group(1)}/, which it may not (it may use: "
                                    f"{', '.join(sorted(layers[folder.name])) or 'no other folder'})")
    return findings


def self_test():
    """Plants each problem in a copy of the sources; each must be reported, and the real tree is clean."""
    real = pathlib.Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        shutil.copytree(real / "sandbox" / "src", root / "sandbox" / "src")
        with open(root / "sandbox" / "src" / "task_spec" / "size_expr.cpp", "a") as f:
            f.write('#include "evaluation/evaluator_steps.hpp"\n')  # a lower layer reaching up
        (root / "sandbox" / "src" / "newfolder").mkdir()
        findings = "\n".join(check(root))
        cyclic = dict(LAYERS, common={"fleet"})
        cycle_findings = "\n".join(check(real, cyclic))
    expected = ["task_spec/size_expr.cpp", "task_spec/ includes from evaluation/", "sandbox/src/newfolder/ is not declared"]
    missed = [e for e in expected if e not in findings]
    if "have a cycle" not in cycle_findings:
        missed.append("a cycle in the declared layers")
    clean = check(real)
    for m in missed:
        print(f"self-test: a planted problem was not reported: {m}")
    for c in clean:
        print(f"self-test: the real tree is not clean: {c}")
    print(f"layers self-test: {len(missed)} planted problem(s) missed")
    return 1 if missed or clean else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    found = check(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve())
    for f in found:
        print(f)
    print(f"layers: {len(found)} finding(s)")
    sys.exit(1 if found else 0)
