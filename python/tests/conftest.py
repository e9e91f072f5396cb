# SPDX-License-Identifier: Apache-2.0
"""Shared helpers: random batches full of ties, and the C++ core's own results for them; and the rule that a
test never skips for want of a dependency.

Every package a Python test needs is installed by the README's first command (test_dependencies.py holds
each import to one): a missing one is an error of the machine, so a test imports it plainly and fails, and a
skip that pytest.importorskip would make ("could not import ...") is turned into a failure here. The one
thing allowed to be absent is the CUDA side (a GPU; the CUDA toolkit, without which the sandbox is not
built): those tests skip, saying so."""
import os
import subprocess
import tempfile

import numpy as np
import pytest

import leap


_DEPENDENCY_SKIP = ("could not import", "No module named")


def _is_dependency_skip(report):
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return False
    return any(marker in str(report.longrepr[2]) for marker in _DEPENDENCY_SKIP)


def _fail_dependency_skip(report):
    reason = report.longrepr[2]
    report.outcome = "failed"
    report.longrepr = (f"{reason}: a test must not skip for want of a dependency; install what the README's first "
                       f"command installs (python/tests/test_dependencies.py lists each package)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _is_dependency_skip(report):
        _fail_dependency_skip(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _is_dependency_skip(report):  # a module-level importorskip skips the whole file at collection
        _fail_dependency_skip(report)


def random_batch(rng, n, groups, interleaved=True):
    """A step's batch: turns 0..3 (0 = unsolved), verdicts, speedups with unknowns and ties, tokens,
    group ids (interleaved or contiguous) and scalar rewards with many exact ties."""
    turns = rng.integers(0, 4, n).astype(np.int32)
    verdict = np.where(turns > 0, int(leap.Verdict.correct), rng.integers(0, 4, n)).astype(np.uint8)
    speedup = rng.choice([np.nan, 0.5, 1.0, 1.04, 1.05, 1.1, 2.0], n) * rng.choice([1.0, 1.0, 1.01], n)
    tokens = rng.choice([0, 100, 104, 105, 110, 1000], n).astype(np.uint32)
    ids = rng.integers(0, groups, n) if interleaved else np.repeat(np.arange(groups), -(-n // groups))[:n]
    rewards = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], n) + rng.choice([0.0, 0.0, 0.25], n)
    return {"turns": turns, "verdict": verdict, "speedup": speedup, "tokens": tokens,
            "ids": ids.astype(np.uint32), "rewards": rewards}


def cpp_results(batch, order, score_tolerance=0.0, epsilon=1e-6):
    """The C++ functions' outputs on the batch, computed by tests/cpp_reference.cpp."""
    executable = os.environ.get("LEAP_CPP_REFERENCE")
    if not executable:
        pytest.skip("LEAP_CPP_REFERENCE is not set (run through CTest)")
    n = len(batch["turns"])
    with tempfile.TemporaryDirectory() as directory:
        source, target = os.path.join(directory, "in"), os.path.join(directory, "out")
        with open(source, "wb") as f:
            f.write(np.uint64(n).tobytes())
            for key, dtype in [("turns", np.int32), ("verdict", np.uint8), ("speedup", np.float64),
                               ("tokens", np.uint32), ("ids", np.uint32), ("rewards", np.float64)]:
                f.write(np.ascontiguousarray(batch[key], dtype=dtype).tobytes())
        flag = lambda value: "1" if value else "0"
        subprocess.run([executable, source, target, flag(order.by_turn), flag(order.by_severity),
                        repr(order.speedup_tolerance), repr(order.token_tolerance),
                        flag(order.tokens_only_when_solved), repr(score_tolerance), repr(epsilon),
                        repr(order.turn_weight)], check=True)
        data = open(target, "rb").read()
    doubles = np.frombuffer(data[:5 * 8 * n], dtype=np.float64).reshape(5, n)
    floats = np.frombuffer(data[5 * 8 * n:], dtype=np.float32).reshape(4, n)
    names = ["rank", "of_scores", "grpo", "dr_grpo", "rloo"]
    results = dict(zip(names, doubles))
    results.update(zip(["rank_f32", "of_scores_f32", "grpo_f32", "rloo_f32"], floats))
    return results


def same_bits(a, b):
    """Equal bit for bit (NaN-free results: array_equal on the raw bytes)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
