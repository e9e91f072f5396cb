# SPDX-License-Identifier: Apache-2.0
"""An environment failure is never the candidate's failure: what leap.environment.SandboxEnvironment makes of
each answer a sandbox client (SandboxPool, FleetClient) can give, and what the episode runner then does. A
fake client answers here, so every kind of answer is reached without a GPU, a server or a Redis:

  the sandbox gave no verdict (no_gpu, status error, an error response such as dead_lettered or
  internal_error, a server that died twice, a timeout)  -> raised: retried, then the sample is masked
  what the candidate's own text decides (a compile error, no kernel, a source too long to send or not
  valid Unicode)                                        -> a verdict: ranked like any other
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Callable, Sequence
from typing import Any

import pytest

import leap
from leap import Completion, SampleKey, Turn, Verdict
from leap.environment import NoVerdict, SandboxEnvironment
from leap.sandbox import SandboxError

KERNEL = 'extern "C" __global__ void scale_add(float* out, int n) {{ out[0] = {k}; }}'


def verdict(name: str, speedup: float | None = 1.25) -> dict[str, Any]:
    return {"status": "verdict", "verdict": name, "speedup": speedup, "feedback": f"the sandbox says {name}"}


class FakeSandbox:
    """A sandbox client (eval(task, source) -> Future) that answers each source with answer(source, n), n
    counting the requests for that source: a result dict, or an exception for the future to hold."""

    def __init__(self, answer: Callable[[str, int], Any]) -> None:
        self.answer = answer
        self.sent: list[str] = []

    def eval(self, task: Any, source: str, **fields: Any) -> concurrent.futures.Future[Any]:
        n = self.sent.count(source)
        self.sent.append(source)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        result = self.answer(source, n)
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
        return future


def evaluate(sandbox: FakeSandbox, text: str) -> leap.Evaluation:
    return asyncio.run(SandboxEnvironment(sandbox)("scale_add", Completion(text), leap.sample_key(0, 0, 1)))


NO_VERDICT = {
    "no_gpu": {"status": "no_gpu", "verdict": None, "detail": "running it needs a GPU (no device)",
               "feedback": "The kernel compiles. It was not run: no GPU is available."},
    "harness_error": {"status": "error", "verdict": None, "error": "GPU runner died: signal 9"},
    "no_verdict_field": {"status": "verdict"},
    "unknown_verdict": verdict("brilliant"),
    "dead_lettered": SandboxError("delivered 3 times without an answer; not run again (request 4, member m0)",
                                  code="dead_lettered"),
    "internal_error": SandboxError("the member failed on this request: std::bad_alloc", code="internal_error"),
    "pool_died_twice": SandboxError("request 7 was in flight on two sandbox servers that died"),
    "timed_out": TimeoutError("request 4 on leap:requests got no answer before its deadline"),
    "not_an_object": ["a", "list"],
}


@pytest.mark.parametrize("kind", sorted(NO_VERDICT))
def test_an_answer_without_a_verdict_is_raised_not_made_a_verdict(kind: str) -> None:
    sandbox = FakeSandbox(lambda source, n: NO_VERDICT[kind])
    with pytest.raises((NoVerdict, SandboxError, TimeoutError)):
        evaluate(sandbox, f"```cuda\n{KERNEL.format(k=1)}\n```")


@pytest.mark.parametrize("kind", ["dead_lettered", "no_gpu", "timed_out"])
def test_a_dead_lettered_unavailable_or_timed_out_evaluation_is_masked_not_ranked(kind: str) -> None:
    # Four samples; sample 0 writes the one kernel that is correct at turn 1, but its evaluation never gets
    # a verdict. As the candidate's runtime_error it would rank last; masked, the others rank among themselves.
    texts = [f"```cuda\n{KERNEL.format(k=k)}\n```" for k in range(4)]
    answers = {texts[0]: NO_VERDICT[kind], texts[1]: verdict("wrong_answer"), texts[2]: verdict("compile_error"),
               texts[3]: verdict("correct")}
    sandbox = FakeSandbox(lambda source, n: answers[next(t for t in texts if source in t)])

    async def policy(task: str, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        return Completion(texts[key.sample], 10)

    batch = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(sandbox), group_size=4,
                                          max_turns=1))
    lost = batch.samples[0]
    assert lost.masked and lost.turns[0].environment_failure and lost.advantage == 0.0
    assert lost.turns[0].verdict != Verdict.correct  # a placeholder, never a made-up verdict
    assert sandbox.sent.count(KERNEL.format(k=0) + "\n") == 2  # tried, and tried once more
    judged = batch.samples[1:]
    assert [e.advantage for e in judged] == leap.rank_advantages_reference([e.outcome for e in judged])
    assert [e.advantage for e in judged] == [-0.5, -0.5, 1.0]
    assert batch.groups[0].stats == leap.GroupStats(size=3, n_correct=1, n_wrong_answer=1, n_compile_error=1)
    assert (batch.metrics.environment_errors, batch.metrics.environment_retries,
            batch.metrics.masked_trajectories) == (2, 1, 1)


def test_what_the_candidates_text_decides_stays_its_verdict() -> None:
    too_long = SandboxError("the request is 5000000 bytes; this server takes at most 4194304 "
                            "(leap-sandbox serve --max-request-bytes)", code="request_too_large")
    sandbox = FakeSandbox(lambda source, n: too_long if "HUGE" in source else verdict("compile_error", None))
    # A compile error (and any verdict) is the sandbox's word on the candidate.
    compiled = evaluate(sandbox, f"```cuda\n{KERNEL.format(k='undefined')}\n```")
    assert not compiled.environment_failure and compiled.verdict == Verdict.compile_error
    # No kernel at all: the sandbox is asked (it answers with its advice) and its verdict stands.
    prose = evaluate(sandbox, "I would use a grid-stride loop.")
    assert not prose.environment_failure and prose.verdict == Verdict.compile_error
    assert prose.feedback.startswith("Your answer contains no kernel")
    # A source too long to send: the candidate made it so.
    huge = evaluate(sandbox, "```cuda\n// HUGE\n" + KERNEL.format(k=2) + "\n```")
    assert not huge.environment_failure and huge.verdict == Verdict.compile_error
    assert "source is too long to be evaluated" in huge.feedback and math.isnan(huge.speedup)
    # Text that is not valid Unicode cannot be sent at all: its verdict, and nothing reaches the sandbox.
    sent = len(sandbox.sent)
    broken = evaluate(sandbox, "```cuda\n" + KERNEL.format(k=3) + "// \ud800\n```")
    assert not broken.environment_failure and broken.verdict == Verdict.compile_error
    assert "is not valid Unicode" in broken.feedback and len(sandbox.sent) == sent


def test_a_retry_that_gets_a_verdict_is_that_verdict() -> None:
    # Dead-lettered once, then judged correct: the sample is ranked on the retry's verdict.
    lost_once = NO_VERDICT["dead_lettered"]
    sandbox = FakeSandbox(lambda source, n: lost_once if n == 0 and "k0" in source else verdict(
        "correct" if "k0" in source else "wrong_answer"))

    async def policy(task: str, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        return Completion(f"```cuda\n// k{key.sample}\n{KERNEL.format(k=1)}\n```", 10)

    batch = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(sandbox), group_size=2,
                                          max_turns=1))
    assert not any(batch.masks)
    assert [e.outcome.solved_turn for e in batch.samples] == [1, 0]
    assert batch.advantages == [1.0, -1.0]
    assert batch.samples[0].turns[0].retries == 1
