# SPDX-License-Identifier: Apache-2.0
"""The sandbox as an episode environment: a completion in, the sandbox's verdict, speedup and feedback out.

    from leap.environment import SandboxEnvironment
    from leap.sandbox import SandboxPool

    with SandboxPool("leap-sandbox", devices=range(8)) as pool:
        environment = SandboxEnvironment(pool)                  # or a leap.fleet.FleetClient
        batch = await leap.run_episodes(tasks, policy, environment, max_concurrency=64)

Each task is the sandbox's task: a built-in name ("softmax") or a spec object (pass task_spec= to map
your own task objects to one). The kernel is taken from the completion (extract_kernel): the last fenced
```cuda / ```cu / ```cpp / ```c++ block, else the last untagged ``` block, else the whole text. What the
sandbox says becomes the feedback of the next turn, bounded in length (default_feedback): its first
compile errors, the mismatch summary, the timing. A completion with no kernel, or with host code, is
evaluated like any other: the sandbox's own advice (the kernel the task needs, host functions not being
compiled) is its feedback, with one line saying what was wrong with the answer. A source the client
refuses to send (a lone surrogate, which has no UTF-8 form; a request line past the server's limit) is
a compile_error decided here, with feedback saying why: the candidate's text earned it. A correct kernel
whose speedup the sandbox left unknown carries the reason in Evaluation.speedup_unknown ("no_room",
"below_floor", ...); its unknown speedup ranks below every known one.

Verdicts and environment failures. Everything the candidate's own text decides is a verdict: no kernel,
host code, a compile error, a kernel that crashes or hangs the GPU runner (the sandbox's verdicts), and
also a source the sandbox could not take (request_too_large, or text that is not valid Unicode): a
compile_error. What is not a verdict raises, and the episode runner takes it as an environment failure,
never the candidate's: it evaluates the completion again (``environment_retries``), then masks the
sample (left out of the gate's counts and the rank, advantage 0; see leap.episode). Raised: NoVerdict
where the kernel compiled but there is no GPU to run it (``no_gpu``); SandboxError where the harness
failed (``status: error``), the server answered with an error (``internal_error``, ``bad_request``, a
fleet's ``dead_lettered``, ...), a pool's server died holding the request twice, or the answer has no
verdict; TimeoutError where no answer came in time (``timeout``, or a fleet request's deadline).

Back-pressure: SandboxPool.eval waits for a free slot when max_in_flight requests are in flight, and
the wait would hold the event loop; keep the runner's max_concurrency at or below the pool's
max_in_flight (64 per server by default).
"""
from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from ._core import Verdict
from .episode import Completion, Evaluation, SampleKey
from . import _request_line
from .sandbox import RequestEncodingError, SandboxError

__all__ = ["KernelSource", "NoVerdict", "SandboxClient", "SandboxEnvironment", "SandboxError", "SandboxReply",
           "default_feedback", "extract_kernel"]

_VERDICTS = {v.name: v for v in Verdict.__members__.values()}

# A fence's language tag: the run of these characters after the backticks (and any blanks).
_TAG = re.compile(r"[A-Za-z0-9_+\-]*")
_KERNEL_TAGS = frozenset({"cuda", "cu", "cpp", "c++", "cxx", "cc"})
_HOST_CODE = "host functions are not allowed in JIT mode"


class NoVerdict(RuntimeError):
    """The kernel compiled, but there is no GPU to run it: the sandbox gives no verdict, never a made-up one
    (an environment failure: the episode runner masks the sample)."""


@dataclass(frozen=True)
class KernelSource:
    """What extract_kernel took from a completion."""
    source: str        # what the sandbox compiles
    fenced: bool       # taken from a fenced block (else the whole text)
    has_kernel: bool   # a __global__ function appears in it


def _opening_tag(line: str) -> str | None:
    """The language tag of a line that opens a fenced block ("" when untagged), or None when it opens none:
    blanks, then ```, then blanks, then the tag; whatever follows the tag on the line is ignored."""
    rest = line.lstrip(" \t")
    if not rest.startswith("```"):
        return None
    match = _TAG.match(rest[3:].lstrip(" \t"))
    return match.group().lower() if match is not None else ""  # the pattern matches every string


def _closes(line: str) -> bool:
    """Whether a line closes a fenced block: ``` alone, with blanks around it; a line ended by CRLF keeps
    its carriage return here, which counts as a blank."""
    return line.strip(" \t\r") == "```"


def extract_kernel(text: str) -> KernelSource:
    """The kernel of a completion: the last ```cuda / ```cu / ```cpp / ```c++ block, else the last untagged
    ``` block, else the whole text. A completion with no __global__ anywhere (prose only) gives an empty
    source, so that the sandbox answers with its advice on the kernel the task needs.

    A block opens at a line of blanks, ``` and a tag (the line must end: ``` as the text's last characters
    opens nothing) and runs to a line of ``` alone or to the end of the text (a model cut off by its token
    limit leaves the last block open); lines may end with LF or CRLF. One pass over the lines, each looked at
    a bounded number of times by linear string operations: the time is linear in the text's length whatever
    it holds (a completion is the candidate's to choose, and this runs on the event loop)."""
    tagged: str | None = None
    untagged: str | None = None
    size = len(text)
    pos = 0
    while True:
        end = text.find("\n", pos)
        if end < 0:
            break  # the last line, unended: it opens no block
        tag = _opening_tag(text[pos:end])
        pos = end + 1
        if tag is None:
            continue
        start = block_end = pos  # the block's lines: up to a closing line, else to the end of the text
        while True:
            if pos >= size:
                block_end = size
                break
            end = text.find("\n", pos)
            line_end = size if end < 0 else end
            if _closes(text[pos:line_end]):
                block_end, pos = pos, line_end + 1
                break
            pos = line_end + 1
        body = text[start:block_end]
        if tag in _KERNEL_TAGS:
            tagged = body
        elif tag == "":
            untagged = body
        if pos >= size:
            break
    block = tagged if tagged is not None else untagged
    if block is not None:
        return KernelSource(block, True, "__global__" in block)
    if "__global__" not in text:
        return KernelSource("", False, False)
    return KernelSource(text, False, True)


@dataclass(frozen=True)
class SandboxReply:
    """One evaluation as the formatter sees it: the sandbox's result object and what was sent."""
    result: Mapping[str, Any]  # the eval result: status, verdict, speedup, detail, feedback, compile, timings, ...
    kernel: KernelSource
    key: SampleKey


def _bounded(text: str, max_chars: int | None) -> str:
    """The text cut to max_chars at a line break where one is near, saying how much was cut."""
    if max_chars is None or len(text) <= max_chars:
        return text
    note = "\n[... {} more characters not shown]"
    room = max(0, max_chars - len(note.format(len(text))))
    cut = text.rfind("\n", 0, room + 1)
    cut = cut if cut >= room // 2 else room
    return text[:cut] + note.format(len(text) - cut)


def default_feedback(reply: SandboxReply, max_chars: int | None = 2000) -> str:
    """The sandbox's own feedback for the next turn (its first compile errors, the mismatch summary, the
    timing), after a line on what was wrong with the answer itself (no kernel, host code), bounded to
    max_chars (None: unbounded)."""
    result = reply.result
    lines: list[str] = []
    if not reply.kernel.has_kernel:
        lines.append("Your answer contains no kernel (no ```cuda block and no __global__ function).")
    text = str(result.get("feedback") or result.get("detail") or result.get("error") or "")
    if _HOST_CODE in text:
        lines.append("Only device code is compiled here: leave out main() and other host code (allocation, copies, "
                     "<<<...>>> launches); the harness allocates the buffers and launches the kernel.")
    lines.append(text)
    return _bounded("\n".join(line for line in lines if line), max_chars)


class SandboxClient(Protocol):
    """What the environment needs of leap.sandbox.SandboxPool and leap.fleet.FleetClient."""

    def eval(self, task: Any, source: str, **fields: Any) -> Future[Any]: ...


# The server's error code for a request line over its limit: the source (the candidate's) made it so.
_TOO_LARGE = "request_too_large"


def _unencodable(source: str) -> str | None:
    """Why the source cannot be sent (a lone surrogate has no UTF-8 form), or None when it can: checked
    here too, for a client of the user's own that does not refuse it at submit as SandboxPool and
    FleetClient do."""
    return _request_line.string_problem(source)


def _speedup(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _speedup_unknown(result: Mapping[str, Any]) -> str:
    """The result's reason its speedup is unknown (speedup_unknown.reason), "" when none is given."""
    unknown = result.get("speedup_unknown")
    reason = unknown.get("reason") if isinstance(unknown, Mapping) else None
    return reason if isinstance(reason, str) else ""


def _refused(why: str) -> dict[str, Any]:
    """A compile_error result for a source the sandbox could not take, as the formatter reads results."""
    return {"status": "verdict", "verdict": Verdict.compile_error.name, "speedup": None, "detail": why,
            "feedback": f"Compile error: {why}"}


class SandboxEnvironment:
    """An episode environment (see leap.episode) that evaluates each completion's kernel in the sandbox.

    sandbox:   a SandboxPool or FleetClient (anything with eval(task, source) -> Future of the result).
    task_spec: maps an episode's task to the sandbox's task (a built-in name or a spec mapping); default:
               the task itself, which must then be one.
    feedback:  the formatter, (SandboxReply) -> str; default default_feedback with max_feedback_chars.
    max_feedback_chars: the bound on the feedback (also applied to a custom formatter's); None: unbounded.
    count_tokens: (feedback) -> its size in tokens, for Evaluation.feedback_tokens; default 0.
    timeout:   seconds to wait for an answer (None: the client's own limit).
    fields:    further eval request fields, e.g. {"headers": {"util.cuh": "..."}} (SandboxPool only).
    """

    def __init__(self, sandbox: SandboxClient, *, task_spec: Callable[[Any], str | Mapping[str, Any]] | None = None,
                 feedback: Callable[[SandboxReply], str] | None = None, max_feedback_chars: int | None = 2000,
                 count_tokens: Callable[[str], int] | None = None, timeout: float | None = None,
                 fields: Mapping[str, Any] | None = None) -> None:
        if not callable(getattr(sandbox, "eval", None)):
            raise TypeError(f"{sandbox!r} has no eval(task, source): pass a leap.sandbox.SandboxPool or a "
                            f"leap.fleet.FleetClient")
        if max_feedback_chars is not None and max_feedback_chars < 40:
            raise ValueError(f"max_feedback_chars ({max_feedback_chars}) leaves no room for feedback: use >= 40")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout ({timeout!r}) must be > 0 seconds, or None")
        self.sandbox = sandbox
        self.task_spec = task_spec
        self.feedback = feedback
        self.max_feedback_chars = max_feedback_chars
        self.count_tokens = count_tokens
        self.timeout = timeout
        self.fields = dict(fields or {})

    def _task(self, task: Any) -> str | Mapping[str, Any]:
        spec = task if self.task_spec is None else self.task_spec(task)
        if not isinstance(spec, (str, Mapping)):
            raise TypeError(f"the sandbox's task must be a built-in name or a spec mapping, got {type(spec).__name__}; "
                            f"pass task_spec= to map your tasks to one")
        return spec

    async def _ask(self, spec: Any, source: str) -> Any:
        """The sandbox's answer for a source; a source the client or the server refuses as too long or
        unreadable is the candidate's compile_error, decided here (never an environment failure, which
        would let a candidate choose to go unranked)."""
        try:
            answer = asyncio.wrap_future(self.sandbox.eval(spec, source, **self.fields))
        except RequestEncodingError as error:
            if error.field != "source":
                raise  # the task or the fields, not the candidate's doing
            return _refused(f"the source was not compiled: it {error.problem}")
        try:
            return await (answer if self.timeout is None else asyncio.wait_for(answer, self.timeout))
        except SandboxError as error:
            if error.code != _TOO_LARGE:  # a server whose limit is below the one the client knows
                raise
            return _refused(f"the kernel's source is too long to be evaluated ({error})")

    async def __call__(self, task: Any, completion: Completion, key: SampleKey) -> Evaluation:
        kernel = extract_kernel(completion.text)
        spec = self._task(task)
        result: Any
        why_not_sent = _unencodable(kernel.source)
        if why_not_sent is not None:  # the candidate's own text: its verdict, not the environment's failure
            result = _refused(f"the source was not compiled: it {why_not_sent}")
        else:
            result = await self._ask(spec, kernel.source)
        if not isinstance(result, Mapping):
            raise SandboxError(f"the sandbox's answer is not an object: {result!r:.200}")
        reply = SandboxReply(result, kernel, key)
        if self.feedback is None:
            text = default_feedback(reply, self.max_feedback_chars)
        else:
            text = _bounded(self.feedback(reply), self.max_feedback_chars)
        status = result.get("status")
        if status == "verdict" and result.get("verdict") in _VERDICTS:
            tokens = 0 if self.count_tokens is None else self.count_tokens(text)
            return Evaluation(_VERDICTS[str(result["verdict"])], _speedup(result.get("speedup")), text, tokens,
                              speedup_unknown=_speedup_unknown(result))
        if status == "no_gpu":
            raise NoVerdict(text)
        raise SandboxError(f"the sandbox gave no verdict (status {status!r}): "
                           f"{_bounded(str(result.get('error') or result.get('detail') or ''), self.max_feedback_chars)}")
