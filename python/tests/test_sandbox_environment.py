# SPDX-License-Identifier: Apache-2.0
"""leap.environment.SandboxEnvironment against a real `leap-sandbox serve`, driven by the episode runner:
a policy whose first kernel does not compile is shown the compiler's errors and compiles on turn 2; a
completion with no kernel and one with host code get the sandbox's advice, not a crash. Compiling needs
no GPU; on a machine without one a compiled kernel gets no verdict, which the runner takes as an
environment failure (retried, then masked) whose feedback says the kernel compiles (asserted as such;
with a GPU, a verdict)."""
from __future__ import annotations

import asyncio
import math
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

import leap
import leap.verl
from leap import Completion, SampleKey, Turn, Verdict
from leap.environment import SandboxEnvironment
from leap.sandbox import RequestEncodingError, SandboxPool

FAKE = [sys.executable, os.path.join(os.path.dirname(__file__), "fake_serve.py")]

SIGNATURE = 'extern "C" __global__ void scale_add(const float* x, const float* y, float* out, float a, int n)'
BROKEN = SIGNATURE + " {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = a * x[i] + y[j];\n}\n"
FIXED = BROKEN.replace("y[j]", "y[i]")


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxPool]:
    executable = os.environ.get("LEAP_SANDBOX")
    if not executable:
        pytest.skip("LEAP_SANDBOX is not set (the sandbox needs the CUDA toolkit; run through CTest)")
    env = dict(os.environ, LEAP_SANDBOX_CACHE_DIR=str(tmp_path_factory.mktemp("cache")))
    start: Any = SandboxPool  # called through Any: leap.sandbox's signatures may or may not be annotated
    with start(executable, servers=1, env=env) as sandbox:
        yield sandbox


def test_compile_errors_are_fed_back_and_fixed(pool: SandboxPool) -> None:
    shown: list[str] = []

    async def policy(task: str, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        if not so_far:
            return Completion(f"Here is the kernel:\n```cuda\n{BROKEN}```\n", 40)
        shown.append(so_far[-1].feedback)
        return Completion(f"Fixed the index:\n```cuda\n{FIXED}```", 38)

    batch = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(pool), group_size=2,
                                          max_turns=2, gate=leap.AlwaysExpand()))
    for episode in batch.samples:
        first, second = episode.turns
        assert first.verdict == Verdict.compile_error and first.error is None
        assert first.feedback.startswith("Compile error:")
        assert 'identifier "j" is undefined' in first.feedback
        assert second.verdict != Verdict.compile_error
        if second.error is not None:  # no GPU: compiled, not run, and said so; not the candidate's failure
            assert second.error == "environment" and second.environment_failure and episode.masked
            assert "NoVerdict" in second.feedback
            assert "The kernel compiles" in second.feedback and "no GPU" in second.feedback
        else:
            assert second.verdict in (Verdict.correct, Verdict.wrong_answer, Verdict.runtime_error, Verdict.timeout)
    assert shown == [batch.samples[0].turns[0].feedback, batch.samples[1].turns[0].feedback]
    assert batch.metrics.evaluations == 4


def run_one(pool: SandboxPool, text: str) -> Turn:
    async def policy(task: str, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        return Completion(text, 10)

    batch = asyncio.run(leap.run_episodes(["scale_add"], policy, SandboxEnvironment(pool), group_size=1,
                                          max_turns=1))
    return batch.samples[0].turns[0]


def test_a_completion_without_a_kernel_gets_advice(pool: SandboxPool) -> None:
    turn = run_one(pool, "I would give each thread one element and use a grid-stride loop.")
    assert turn.error is None and turn.verdict == Verdict.compile_error
    assert turn.feedback.startswith("Your answer contains no kernel")
    # The sandbox's own advice names the kernel the task needs.
    assert "no kernel named 'scale_add'" in turn.feedback and 'extern "C" __global__ void scale_add' in turn.feedback


def test_host_code_gets_advice(pool: SandboxPool) -> None:
    host = FIXED + ("int main() {\n  float* d;\n  cudaMalloc(&d, 1024);\n  scale_add<<<1, 256>>>(d, d, d, 2.0f, 256);\n"
                    "  return 0;\n}\n")
    turn = run_one(pool, f"```cuda\n{host}```")
    assert turn.error is None and turn.verdict == Verdict.compile_error
    assert "host functions are not allowed" in turn.feedback  # the compiler's word, through the sandbox
    assert "Only device code is compiled here" in turn.feedback


def test_feedback_is_bounded_and_the_formatter_overridable(pool: SandboxPool) -> None:
    many = SIGNATURE + " {\n" + "".join(f"  out[{n}] = v{n};\n" for n in range(60)) + "}\n"

    async def policy(task: str, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        return Completion(f"```cuda\n{many}```", 10)

    async def both() -> tuple[leap.EpisodeBatch, leap.EpisodeBatch]:
        bounded = SandboxEnvironment(pool, max_feedback_chars=300)
        custom = SandboxEnvironment(pool, feedback=lambda reply: f"status {reply.result['status']}, "
                                                                  f"{reply.result['compile']['status']}",
                                    count_tokens=len)
        return (await leap.run_episodes(["scale_add"], policy, bounded, group_size=1, max_turns=1),
                await leap.run_episodes(["scale_add"], policy, custom, group_size=1, max_turns=1))

    bounded, custom = asyncio.run(both())
    turn = bounded.samples[0].turns[0]
    assert turn.verdict == Verdict.compile_error and len(turn.feedback) <= 300
    assert turn.feedback.startswith("Compile error:") and "more characters not shown]" in turn.feedback
    assert custom.samples[0].turns[0].feedback == "status verdict, error"
    assert custom.metrics.feedback_tokens == len("status verdict, error")


def evaluate(environment: SandboxEnvironment, text: str, task: Any = "scale_add") -> leap.Evaluation:
    return asyncio.run(environment(task, Completion(text, 10), leap.sample_key(0, 0, 1)))


def test_a_source_the_sandbox_cannot_read_is_a_compile_error_decided_here() -> None:
    """A lone surrogate in the completion (no UTF-8 form: serve answered such a line "id": null and the
    request was lost) and a source past the server's line limit are the candidate's doing: a
    compile_error with feedback saying why, never an exception (an environment failure, which a
    candidate could choose to go unranked). Nothing is sent."""
    with SandboxPool(FAKE, servers=1, args=["--max-request-bytes", "4096"]) as pool:
        environment = SandboxEnvironment(pool)
        surrogate = evaluate(environment, "```cuda\n" + SIGNATURE + " { out[0] = 1; } // \ud800\n```")
        assert surrogate.verdict == Verdict.compile_error and math.isnan(surrogate.speedup)
        assert surrogate.feedback.startswith("Compile error: the source was not compiled")
        assert "lone surrogate U+D800" in surrogate.feedback
        large = evaluate(environment, "```cuda\n" + SIGNATURE + " {}\n" + "// padding\n" * 500 + "```")
        assert large.verdict == Verdict.compile_error and "limit of 4096 bytes" in large.feedback
        # The whole text, when there is no fence: the same rule.
        assert evaluate(environment, SIGNATURE + " {}\udfff").verdict == Verdict.compile_error
        # The task and the environment's fields are not the candidate's: refusing them is an error.
        with pytest.raises(RequestEncodingError, match="task.scale"):
            evaluate(environment, "```cuda\n" + SIGNATURE + " {}\n```", task={"scale": float("nan")})
        assert pool.in_flight == 0


def test_compute_score_returns_for_a_completion_the_sandbox_cannot_read() -> None:
    """leap.verl.compute_score on a completion with a lone surrogate: a compile_error scored 0, where it
    never returned (the request's future never resolved)."""
    leap.verl.configure_sandbox(FAKE, servers=1)
    try:
        score = asyncio.run(leap.verl.compute_score("kernels", "```cuda\n__global__ void k() {} \ud83d\n```",
                                                    "softmax"))
        assert score["verdict"] == "compile_error" and score["score"] == 0
    finally:
        leap.verl.configure_sandbox()
