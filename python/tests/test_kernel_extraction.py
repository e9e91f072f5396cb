# SPDX-License-Identifier: Apache-2.0
"""leap.environment.extract_kernel and the feedback's bound: which part of a completion the sandbox
compiles, and how long feedback is cut."""
from __future__ import annotations

import random
import re

import pytest

from leap import environment
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


def test_a_crlf_completion_closes_its_block_before_the_prose() -> None:
    """A completion with CRLF line ends: "```\\r" closes the block, so the prose after it is not compiled
    (it was, and a correct kernel failed to compile)."""
    kernel = KERNEL.replace("\n", "\r\n")
    text = f"Here is the kernel:\r\n```cuda\r\n{kernel}```\r\nIt scales x in place.\r\n"
    assert extract_kernel(text) == KernelSource(kernel, True, True)
    untagged = f"```\r\n{kernel}``` \r\nDone.\r\n```python\r\nprint(1)\r\n```\r\n"
    assert extract_kernel(untagged) == KernelSource(kernel, True, True)


# The fence rules as a regular expression: the reference for the scanner on small texts without carriage
# returns (on a last line of ``` and 64 KB of blanks or letters it backtracks for seconds).
_REFERENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+\-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)


def reference_kernel(text: str) -> KernelSource:
    tagged = untagged = None
    for match in _REFERENCE.finditer(text):
        tag = match.group(1).lower()
        if tag in ("cuda", "cu", "cpp", "c++", "cxx", "cc"):
            tagged = match.group(2)
        elif tag == "":
            untagged = match.group(2)
    block = tagged if tagged is not None else untagged
    if block is not None:
        return KernelSource(block, True, "__global__" in block)
    return KernelSource(text, False, True) if "__global__" in text else KernelSource("", False, False)


def test_the_scanner_follows_the_fence_rules_on_random_text() -> None:
    pieces = ["```", "```cuda", "```CU", "```python", "``", "`", "\n", "\n", "\n", " ", "\t", "x", "cuda", " c++",
              "__global__", "-", "+"]
    generator = random.Random(31)
    for _ in range(20000):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(0, 14)))
        assert extract_kernel(text) == reference_kernel(text), repr(text)


@pytest.mark.parametrize("shape", ["letters after a fence", "blanks after a fence", "tabs and a tag", "blank lines",
                                   "fences in a block", "near-closing lines"])
def test_adversarial_fences_are_scanned_in_linear_time(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fence followed by 1 MiB of letters or blanks took the regular expression time quadratic in the
    length (7.5 s at 64 KB, on the event loop with the GIL held). The scanner looks at each line a bounded
    number of times, with string operations linear in the line: counted here, the characters it hands to
    its line tests stay within twice the text's length, whatever the text holds."""
    n = 1 << 20
    text = {"letters after a fence": "prose\n```" + "a" * n,
            "blanks after a fence": "```" + " " * n,
            "tabs and a tag": "```\t" + "\t" * n + "cuda",
            "blank lines": "```cuda\n" + " \n" * (n // 2),
            "fences in a block": "```cuda\n" + "```python\n" * (n // 10),
            "near-closing lines": "```\n" + ("```" + " " * 61 + "x\n") * (n // 64)}[shape]
    examined = [0]
    opening_tag, closes = environment._opening_tag, environment._closes

    def counted_opening_tag(line: str) -> str | None:
        examined[0] += len(line) + 1
        return opening_tag(line)

    def counted_closes(line: str) -> bool:
        examined[0] += len(line) + 1
        return closes(line)

    monkeypatch.setattr(environment, "_opening_tag", counted_opening_tag)
    monkeypatch.setattr(environment, "_closes", counted_closes)
    extract_kernel(text)
    assert examined[0] <= 2 * len(text) + 2
