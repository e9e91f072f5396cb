# SPDX-License-Identifier: Apache-2.0
"""leap.run_episodes agrees with leap::run_step bit for bit: the same scripted policy and environment (here
and in episode_reference.cpp) over 100 groups give the same turns, gate decisions, outcomes, advantages
(per trajectory and per turn), masks and metrics, for each gate, the speed-aware orders and a
normalisation, with environment failures present (retried, and masked when no retry judges them)."""
from __future__ import annotations

import asyncio
import math
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

import leap
from leap import Completion, Evaluation, GateDecision, SampleKey, Turn, Verdict

TASKS = 100
GROUP_SIZE = 8
MAX_TURNS = 3
SEED = 20260101
BASE = (10, 40, 70, 95)
SPEEDUPS = (0.5, 1.0, 1.03, 1.05, 1.1, 2.0, math.nan, 1.0)


@dataclass(frozen=True)
class Task:
    id: int  # as in the C++ twin: 7 t + 3, ids that are not the indices


# The script: the twin of ScriptedPolicy / ScriptedEnvironment in episode_reference.cpp.
async def policy(task: Task, so_far: Sequence[Turn], key: SampleKey) -> Completion:
    if (key.seed >> 20) % 53 == 0:
        raise RuntimeError("scripted policy failure")
    return Completion(f"kernel {key.seed}", 50 + (key.seed >> 7) % 200 + 3 * len(so_far))


async def environment(task: Task, completion: Completion, key: SampleKey) -> Evaluation:
    await asyncio.sleep(0)  # let other samples interleave, as real evaluations do
    if (key.seed >> 40) % 47 == 0:
        if key.attempt == 0:
            raise RuntimeError("scripted environment failure")
        return Evaluation.environment_failed("scripted environment unavailable")
    if (key.seed >> 50) % 23 == 0 and key.attempt == 0:
        return Evaluation.environment_failed("dead-lettered")
    feedback_tokens = (key.seed >> 45) % 30 + completion.tokens % 3
    if (key.seed >> 11) % 100 < BASE[key.task_id % 4] + 25 * (key.turn - 1):
        return Evaluation(Verdict.correct, SPEEDUPS[(key.seed >> 33) % 8], "scripted feedback", feedback_tokens)
    return Evaluation(Verdict((key.seed >> 29) % 4), math.nan, "scripted feedback", feedback_tokens)


def gate_named(name: str) -> leap.episode.Gate:
    band = leap.FailBandGate.leap_default(GROUP_SIZE)
    gates: dict[str, leap.episode.Gate] = {
        "dcp": band, "severity": leap.SeverityAwareGate.leap_default(GROUP_SIZE), "always": leap.AlwaysExpand(),
        "never": leap.NeverExpand(), "budget": leap.BudgetedGate(band, max_groups=20),
        "tracker": leap.DifficultyTracker(),
    }
    return gates[name]


ORDERS = {"published": leap.KernelOrder(), "speedup": leap.KernelOrder.with_speedup(0.05),
          "speedup_tokens": leap.KernelOrder.with_speedup_and_tokens(0.05, 0.0),
          "severity_weighted": leap.KernelOrder(by_severity=True, turn_weight=0.5)}


def hexes(values: Sequence[float]) -> list[str]:
    """Exact text of doubles (NaNs as one spelling), to compare bit for bit."""
    return ["nan" if math.isnan(v) else float.hex(v) for v in values]


def cpp_steps(gate: str, order: str, normalization: str, steps: int, gamma: float, retries: int) -> list[list[str]]:
    """run_step's records per step, each line with its doubles in hexadecimal."""
    executable = os.environ.get("LEAP_EPISODE_REFERENCE")
    if not executable:
        pytest.skip("LEAP_EPISODE_REFERENCE is not set (run through CTest)")
    text = subprocess.run([executable, str(TASKS), str(GROUP_SIZE), str(MAX_TURNS), repr(gamma), str(SEED), "5",
                           str(steps), gate, order, normalization, str(retries)], check=True, capture_output=True,
                          text=True).stdout
    result: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("step "):
            result.append([])
        # printf's %a and float.hex spell doubles differently: read them back and write them one way.
        result[-1].append(" ".join(canonical(field) for field in line.split()))
    return result


def canonical(field: str) -> str:
    if "0x" in field or "nan" in field:
        return hexes([float.fromhex(field.replace("-nan", "nan"))])[0]
    return field


def python_lines(batch: leap.EpisodeBatch, step: int) -> list[str]:
    """The same records as episode_reference.cpp prints, from the Python runner's result."""
    lines = [f"step {step}"]
    for group in batch.groups:
        s, d = group.stats, group.decision
        lines.append(f"group {group.task_index} {s.size} {s.n_correct} {s.n_wrong_answer} {s.n_runtime_error} "
                     f"{s.n_timeout} {s.n_compile_error} {int(d.expansion)} {int(d.reason)}")
    for i, episode in enumerate(batch.samples):
        o = episode.outcome
        lines.append(" ".join([f"traj {i} {len(episode.turns)} {o.solved_turn} {int(o.best_verdict)} {o.tokens} "
                               f"{int(episode.masked)}"]
                              + hexes([o.speedup, episode.advantage] + episode.turn_advantages)))
        for t, turn in enumerate(episode.turns, 1):
            lines.append(f"turn {i} {t} {int(turn.verdict)} {turn.tokens} {int(turn.environment_failure)} "
                         + hexes([turn.speedup])[0])
    m = batch.metrics
    lines.append(" ".join(
        [f"metrics {m.step} {m.tasks} {m.group_size} {m.max_turns} {m.trajectories} {m.evaluations} "
         f"{m.policy_errors} {m.environment_errors} {m.environment_retries} {m.masked_trajectories} "
         f"{m.completion_tokens} {m.feedback_tokens} {m.solved_later} {m.solved_later_negative}"] + hexes([m.advantage_rms] + list(m.accuracy_at_turn))
        + [str(e) for e in m.evaluations_per_turn] + [str(m.groups(e)) for e in leap.Expansion.__members__.values()]
        + [str(m.groups(r)) for r in leap.GateReason.__members__.values()]))
    return lines


@pytest.mark.parametrize("gate, order, normalization, steps, gamma, retries", [
    ("dcp", "published", "none", 1, 1.0, 1),
    ("dcp", "speedup", "none", 1, 0.9, 1),
    ("dcp", "speedup_tokens", "group_std", 1, 1.0, 1),
    ("severity", "severity_weighted", "none", 1, 0.5, 1),
    ("always", "published", "batch_rms", 1, 1.0, 1),
    ("never", "published", "none", 1, 1.0, 1),
    ("budget", "speedup", "none", 1, 1.0, 1),
    ("tracker", "published", "none", 3, 1.0, 1),  # one tracker over three steps: its state carries over
    ("dcp", "published", "none", 1, 1.0, 0),  # no retry: every environment failure is masked at once
    ("always", "speedup", "group_std", 1, 1.0, 3),
])
def test_runner_and_run_step_agree_bit_for_bit(gate: str, order: str, normalization: str, steps: int,
                                               gamma: float, retries: int) -> None:
    expected = cpp_steps(gate, order, normalization, steps, gamma, retries)
    tasks = [Task(7 * t + 3) for t in range(TASKS)]
    chosen = gate_named(gate)
    for k in range(steps):
        batch = asyncio.run(leap.run_episodes(
            tasks, policy, environment, group_size=GROUP_SIZE, max_turns=MAX_TURNS, gate=chosen, order=ORDERS[order],
            normalization=leap.AdvantageNormalization.__members__[normalization], gamma=gamma, seed=SEED,
            step=5 + k, max_concurrency=37, environment_retries=retries))
        got = python_lines(batch, 5 + k)
        assert len(got) == len(expected[k])
        for mine, theirs in zip(got, expected[k]):
            assert mine == theirs
    # The script exercised what it should: both kinds of failure, retries that answered, masked samples,
    # later solves and several decisions.
    m = batch.metrics
    assert m.policy_errors > 0 and m.environment_errors > 0 and m.masked_trajectories > 0
    assert m.environment_errors == m.environment_retries + m.masked_trajectories
    if retries > 0:
        assert m.environment_retries > m.masked_trajectories * retries  # some retries were judged
    if gate in ("dcp", "always"):
        assert batch.metrics.solved_later > 0 and batch.metrics.evaluations_per_turn[2] > 0
        assert len({g.decision for g in batch.groups}) >= (1 if gate == "always" else 3)


def test_errors_name_the_evaluation() -> None:
    tasks = [Task(7 * t + 3) for t in range(TASKS)]
    batch = asyncio.run(leap.run_episodes(tasks, policy, environment, group_size=GROUP_SIZE, seed=SEED, step=5))
    failed = [(e, t) for e in batch.samples for t in e.turns if t.error is not None]
    assert {t.error for _, t in failed} == {"policy", "environment"}
    for episode, turn in failed:
        assert turn.verdict == Verdict.runtime_error and turn.error is not None
        assert f"task {episode.task_index} (id {episode.task_id}), sample {episode.sample}" in turn.feedback
        assert (turn.completion is None) == (turn.error == "policy")
        assert turn.environment_failure == (turn.error == "environment")
        if turn.error == "policy":
            assert "scripted policy failure" in turn.feedback
        else:
            assert episode.masked  # the last attempt's reason: the retry found the environment unavailable
            assert "could not judge it" in turn.feedback and "scripted environment unavailable" in turn.feedback
            assert "(attempt 2 of 2; the sample is masked)" in turn.feedback
            assert turn is episode.turns[-1] and episode.advantage == 0.0 and set(episode.turn_advantages) == {0.0}
    assert batch.groups[0].decision == GateDecision(batch.groups[0].decision.expansion, batch.groups[0].decision.reason)
