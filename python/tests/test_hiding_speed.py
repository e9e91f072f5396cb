# SPDX-License-Identifier: Apache-2.0
"""Hiding speed does not pay, through every Python path a sandbox result takes to a reward.

A correct kernel can make its speedup unknown at will: be slow only in the correctness trials at the
timing sizes, so that they take most of the time limit and timing is skipped (the sandbox's result:
"speedup": null, "speedup_unknown": {"reason": "no_room", ...}), or have one timed run below the physical
floor ("below_floor"). Such a kernel used to score as 1x (turn_and_speedup_score) and tie on speed with
every kernel of its turn (KernelOrder): at max_turns 1, an honest 0.5x kernel scored 63.31 and the same
kernel hiding its speed 64.00, above it. Here the sandbox's answers for an honest 0.5x kernel, an honest
10x kernel and the two that hid their speed (as `leap-sandbox serve` writes them; the C++ side of the
same four kernels, evaluated on the fake GPU, is in tests/sandbox/evaluation/test_harness_protocol.cpp)
go through SandboxEnvironment, the episode runner's rank (the C++ core), leap.scores, verl's
compute_score, OpenRLHF's reward_func and TRL's reward: each puts both hidden kernels below the honest
0.5x one."""
import asyncio
import math
import sys

import numpy as np
import pytest

import leap
import leap.openrlhf
import leap.process_sandbox
import leap.scores
import leap.trl
import leap.verl
from leap.environment import SandboxEnvironment

# Each kernel's source names it after "// "; the scripted server answers with the result the sandbox gives
# that kernel (reference 2 ms): honest 4 ms (0.5x), honest 0.2 ms (10x), and the 0.5x kernel hiding its speed.
KERNELS = ("honest_0.5x", "honest_10x", "no_room", "below_floor")
SCRIPTED_SERVE = r'''
import json, sys
DETAIL = {
    "no_room": "the correctness trials took most of the task's time limit of 500 ms; "
               "no room was left to time the kernel",
    "below_floor": "the fastest timed run (0.0000109 ms) is below the physical floor of 0.0000218 ms",
}
SPEEDUP = {"honest_0.5x": 0.5, "honest_10x": 10.0}
for line in sys.stdin:
    request = json.loads(line)
    kernel = request["source"].split("// ", 1)[1].split()[0]
    unknown = {"reason": kernel, "detail": DETAIL[kernel]} if kernel in DETAIL else None
    result = {"status": "verdict", "verdict": "correct", "speedup": SPEEDUP.get(kernel),
              "speedup_unknown": unknown, "feedback": "Correct.", "task": request["task"]}
    sys.stdout.write(json.dumps({"id": request["id"], "ok": True, "result": result}) + "\n")
    sys.stdout.flush()
'''


def completion(kernel: str) -> str:
    return f"```cuda\n__global__ void scale_add() {{}}  // {kernel}\n```\n"


@pytest.fixture()
def scripted_sandbox(tmp_path):
    server = tmp_path / "serve.py"
    server.write_text(SCRIPTED_SERVE)
    leap.process_sandbox.configure([sys.executable, str(server)], servers=1)
    try:
        yield leap.process_sandbox.client()
    finally:
        leap.process_sandbox.configure()


def below_the_honest_kernel(values, slow=0, fast=1, hidden=(2, 3)):
    """The hidden kernels rank below the honest 0.5x one, which ranks below the 10x one; the hidden two tie."""
    values = list(values)
    return all(values[h] < values[slow] < values[fast] for h in hidden) and values[hidden[0]] == values[hidden[1]]


def test_hiding_speed_does_not_pay_in_the_score_encoding():
    """leap.scores at max_turns 1, the figures of the weakness: the honest 0.5x kernel 63.31, the 10x one
    66.30, a hidden speed 48.00 (it was 64.00, above the honest 0.5x kernel)."""
    scores = [leap.scores.turn_and_speedup_score(1, 1, s) for s in (0.5, 10.0, math.nan, None)]
    assert scores[0] == pytest.approx(64 + math.log(0.5)) and round(scores[0], 2) == 63.31
    assert scores[1] == pytest.approx(64 + math.log(10.0)) and round(scores[1], 2) == 66.30
    assert scores[2] == scores[3] == 48.0
    assert below_the_honest_kernel(scores)
    fields = [leap.scores.score_fields(1, 1, "correct", s) for s in (0.5, 10.0, math.nan, math.nan)]
    assert [f["score"] for f in fields] == [scores[0], scores[1], 48.0, 48.0]
    ids = np.zeros(4, dtype=np.uint32)
    for tolerance in (0.0, leap.scores.speedup_tolerance(0.05)):
        assert below_the_honest_kernel(leap.rank_advantages_of_scores(np.array(scores), ids, tolerance))


def test_hiding_speed_does_not_pay_through_the_episode_runner_and_the_core(scripted_sandbox):
    """SandboxEnvironment reads the four answers (the reason reaches the turn), and the episode runner's rank
    (leap::run_step in the C++ core) under KernelOrder.with_speedup puts the hidden kernels last."""

    async def policy(task, so_far, key):
        return leap.Completion(completion(KERNELS[key.sample]), 10)

    for order in (leap.KernelOrder.with_speedup(), leap.KernelOrder.with_speedup(0.05),
                  leap.KernelOrder.with_speedup_and_tokens()):
        batch = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(scripted_sandbox),
                                              group_size=4, max_turns=1, order=order))
        turns = [sample.turns[0] for sample in batch.samples]
        assert [t.verdict for t in turns] == [leap.Verdict.correct] * 4
        assert [t.speedup_unknown for t in turns] == ["", "", "no_room", "below_floor"]
        assert math.isnan(turns[2].speedup) and math.isnan(turns[3].speedup)
        advantages = [sample.advantage for sample in batch.samples]
        assert below_the_honest_kernel(advantages), (order, advantages)
        assert advantages == pytest.approx([1 / 3, 1.0, -2 / 3, -2 / 3])  # it was [-1/3, 1/3, 0, 0]


def test_hiding_speed_does_not_pay_through_the_trainer_adapters(scripted_sandbox):
    """verl's compute_score, OpenRLHF's reward_func and TRL's leap_reward, on the sandbox's answers: each
    scores the hidden kernels 48.00, under the honest 0.5x kernel's 63.31."""
    verl = [asyncio.run(leap.verl.compute_score("kernels", completion(k), "scale_add")) for k in KERNELS]
    assert [v["verdict"] for v in verl] == ["correct"] * 4 and [v["solved_turn"] for v in verl] == [1] * 4
    assert [v["score"] for v in verl] == pytest.approx([64 + math.log(0.5), 64 + math.log(10.0), 48.0, 48.0])
    assert below_the_honest_kernel([v["score"] for v in verl])

    openrlhf = leap.openrlhf.reward_func([completion(k) for k in KERNELS], [""] * 4, ["scale_add"] * 4)
    rewards = openrlhf["rewards"].tolist()  # float32, as OpenRLHF holds them
    assert rewards == pytest.approx([v["score"] for v in verl], abs=1e-4)
    assert below_the_honest_kernel(rewards)
    assert openrlhf["scores"].tolist() == [1.0] * 4

    trl = leap.trl.leap_reward(1)(solved_turn=[1] * 4, speedup=[v["speedup"] for v in verl])
    assert trl == [v["score"] for v in verl]
    assert below_the_honest_kernel(trl)
