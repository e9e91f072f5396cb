# SPDX-License-Identifier: Apache-2.0
"""leap.environment.extract_kernel and the feedback's bound: which part of a completion the sandbox
compiles, and how long feedback is cut."""
from __future__ import annotations

import pytest

from leap.environment import KernelSource, SandboxReply, default_feedback, extract_kernel
from leap.episode import sample_key

KERNEL = 'extern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n'


def test_the_last_cuda_or_cpp_block_wins() -> None:
    text = f"First try:\n```cuda\n{KERNEL.replace('1.0f', '2.0f')}```\nBetter:\n```cpp\n{KERNEL}```\nDone."
    assert extract_kernel(text) == KernelSource(KERNEL, True, True)


def test_a_tagged_block_beats_an_untagged_one_and_other_languages_are_skipped() -> None:
    text = f"```cu\n{KERNEL}```\n```\nnvcc -o k k.cu\n```\n```python\nprint('launch')\n```\n"
    assert extract_kernel(text).source == KERNEL


def test_an_untagged_block_when_there_is_no_tagged_one() -> None:
    assert extract_kernel(f"Here:\n```\n{KERNEL}```\n") == KernelSource(KERNEL, True, True)


def test_a_block_left_open_runs_to_the_end() -> None:
    assert extract_kernel(f"```cuda\n{KERNEL}") == KernelSource(KERNEL, True, True)


def test_the_whole_text_when_there_is_no_block() -> None:
    assert extract_kernel(KERNEL) == KernelSource(KERNEL, False, True)


@pytest.mark.parametrize("text", ["I would tile the loop through shared memory.", ""])
def test_prose_gives_an_empty_source(text: str) -> None:
    assert extract_kernel(text) == KernelSource("", False, False)


def test_feedback_is_cut_at_a_line_and_says_how_much() -> None:
    errors = "".join(f"candidate.cu({n}): error: identifier \"v{n}\" is undefined\n" for n in range(200))
    reply = SandboxReply({"status": "verdict", "verdict": "compile_error", "feedback": "Compile error:\n" + errors},
                         KernelSource(KERNEL, True, True), sample_key(0, 0, 1))
    text = default_feedback(reply, 500)
    assert len(text) <= 500
    assert text.startswith("Compile error:\ncandidate.cu(0): error")
    kept, note = text.rsplit("\n[... ", 1)
    assert kept.endswith("is undefined")  # whole lines only
    assert note == f"{len('Compile error:') + 1 + len(errors) - len(kept)} more characters not shown]"
    assert default_feedback(reply, None).endswith(errors)
