# SPDX-License-Identifier: Apache-2.0
"""LEAP's multi-turn episodes in Python: the asynchronous counterpart of ``leap::run_step``.

A whole step (a batch of tasks, G samples each), where one process sees every group::

    batch = await leap.run_episodes(tasks, policy, environment, group_size=8, max_turns=3,
                                    max_concurrency=64)
    for episode in batch.samples:        # task-major: index = task_index * G + sample
        episode.turns, episode.outcome, episode.advantage, episode.turn_advantages
    batch.groups[t].decision             # the gate's decision on task t, with its reason
    batch.metrics.as_dict()              # leap::StepMetrics

    async def policy(task, so_far: Sequence[Turn], key: SampleKey) -> Completion: ...
    async def environment(task, completion: Completion, key: SampleKey) -> Evaluation: ...

Turn 1 runs for every sample; the gate (DCP, ``FailBandGate.leap_default(G)``, by default) decides on
each group's turn-1 verdicts; the expanded groups' unsolved samples get their last feedback and another
turn, up to ``max_turns``; a solved sample stops. The gate's decisions, outcomes, advantages, turn credit
and metrics come from the C++ core: the gate through the bindings, and the rest from ``leap::run_step``
itself run over the recorded turns, so a deterministic policy gives bit for bit what ``run_step``
gives. SampleKey.seed is derived as run_step derives it.

One sample at a time, where a trainer runs one episode per sample (verl's agent loops), the samples of
a group meet at a :class:`GroupCoordinator` after turn 1 and get the group's decision::

    coordinator = GroupCoordinator(group_size=8, timeout=600.0)      # one per process, shared
    episode = await run_sample_episode(task, policy, environment, group_id=uid,
                                       coordinator=coordinator, max_turns=3)   # sample=k when known

Failures: a policy or environment that raises does not abort the step. That evaluation becomes a
runtime_error turn whose feedback names the task, sample and turn and carries the message (``Turn.error``
says which callable raised), counted in ``metrics.policy_errors`` / ``environment_errors``; a callable
returning the wrong type counts the same way. Cancellation is not a failure: it propagates. Misuse (bad
options, a bad gate, a policy that is not callable) raises ValueError or TypeError before anything runs.
"""
from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar, Union

from . import _core
from ._core import (AdvantageNormalization, AlwaysExpand, BudgetedGate, DifficultyTracker, FailBandGate,
                    GateDecision, GroupStats, KernelOrder, NeverExpand, Outcome, SeverityAwareGate, StepMetrics,
                    Verdict)

__all__ = [
    "Completion", "Environment", "EpisodeBatch", "Evaluation", "Gate", "GroupCoordinator", "GroupResult", "Policy",
    "SampleEpisode", "SampleKey", "ScoredEpisode", "Turn", "run_episodes", "run_sample_episode", "sample_key",
]

TaskT = TypeVar("TaskT")

#: Any gate of the C++ core. BudgetedGate needs a whole step: run_episodes takes it, GroupCoordinator does not.
Gate = Union[FailBandGate, SeverityAwareGate, AlwaysExpand, NeverExpand, BudgetedGate, DifficultyTracker]

_U64 = 1 << 64
_U32_MAX = (1 << 32) - 1


class SampleKey(NamedTuple):
    """Which evaluation a policy or environment call belongs to (leap::SampleKey)."""
    task_index: int  # position of the task in this step's batch
    task_id: int     # the task's id (stable across steps), else task_index
    sample: int      # 0..G-1 within the task's group
    turn: int        # 1-based
    step: int        # the step's index
    seed: int        # a function of (seed, step, task_id, sample, turn) only, as run_step derives it


def sample_key(task_index: int, sample: int, turn: int, *, task_id: int | None = None, step: int = 0,
               seed: int = 0) -> SampleKey:
    """The key run_step gives (task_index, sample, turn) under RolloutOptions seed and step."""
    tid = task_index if task_id is None else task_id
    return SampleKey(task_index, tid, sample, turn, step, _core._sample_seed(seed, step, tid, sample, turn))


@dataclass(frozen=True)
class Completion:
    """What the policy wrote for one turn. payload: anything the trainer keeps (token ids, log-probs)."""
    text: str
    tokens: int = 0  # completion tokens of this turn, 0 to 2^32 - 1
    payload: Any = None


@dataclass(frozen=True)
class Evaluation:
    """What the environment said of one completion."""
    verdict: Verdict
    speedup: float = math.nan  # reference time / candidate time; NaN = unknown
    feedback: str = ""         # shown to the policy on the next turn
    feedback_tokens: int = 0   # size of that feedback in tokens, when the environment knows it
    # Why speedup is NaN, as the environment says it (the sandbox: "not_correct", "not_requested",
    # "no_room", "below_floor", "not_measured"); "" when it is known or not said. An unknown speedup
    # ranks below every known one whatever the reason.
    speedup_unknown: str = ""


@dataclass
class Turn:
    """One turn of an episode: the completion (None when the policy raised) and its evaluation."""
    completion: Completion | None
    verdict: Verdict
    speedup: float
    tokens: int
    feedback: str
    feedback_tokens: int = 0
    error: str | None = None  # "policy" or "environment" when that callable raised (a runtime_error turn)
    speedup_unknown: str = ""  # Evaluation.speedup_unknown: why speedup is NaN, when the environment said

    @property
    def text(self) -> str:
        """The completion's text ("" when the policy raised)."""
        return "" if self.completion is None else self.completion.text


Policy = Callable[[TaskT, Sequence[Turn], SampleKey], Awaitable[Completion]]
Environment = Callable[[TaskT, Completion, SampleKey], Awaitable[Evaluation]]


@dataclass
class SampleEpisode:
    """One sample's episode: its turns, its Outcome (leap::summarize) and its group's gate decision."""
    task_index: int
    task_id: int
    sample: int
    turns: list[Turn]
    outcome: Outcome
    decision: GateDecision


@dataclass
class ScoredEpisode(SampleEpisode):
    """A sample of a whole step, with its advantage (before turn credit) and one advantage per turn."""
    advantage: float = 0.0
    turn_advantages: list[float] = field(default_factory=list)


@dataclass
class GroupResult:
    """One task's group: its turn-1 counts and the gate's decision (decision.reason says why)."""
    task_index: int
    task_id: int
    stats: GroupStats
    decision: GateDecision


@dataclass
class EpisodeBatch:
    """A step's episodes (leap::StepResult): samples task-major, one GroupResult per task, the metrics."""
    samples: list[ScoredEpisode]
    groups: list[GroupResult]
    metrics: StepMetrics

    @property
    def outcomes(self) -> list[Outcome]:
        return [s.outcome for s in self.samples]

    @property
    def advantages(self) -> list[float]:
        return [s.advantage for s in self.samples]

    @property
    def group_ids(self) -> list[int]:
        return [s.task_index for s in self.samples]


# ---- one turn ------------------------------------------------------------------------------------------

def _failure(who: str, key: SampleKey, error: BaseException, tokens: int) -> Turn:
    message = (f"leap.episode: the {who} raised on task {key.task_index} (id {key.task_id}), sample {key.sample}, "
               f"turn {key.turn}: {type(error).__name__}: {error}")
    return Turn(None, Verdict.runtime_error, math.nan, tokens, message, 0, who)


def _check_completion(completion: object) -> Completion:
    if not isinstance(completion, Completion):
        raise TypeError(f"the policy returned {type(completion).__name__}; expected leap.episode.Completion")
    if not isinstance(completion.tokens, int) or not 0 <= completion.tokens <= _U32_MAX:
        raise ValueError(f"Completion.tokens ({completion.tokens!r}) must be an int in [0, 2^32 - 1]")
    return completion


def _check_evaluation(evaluation: object) -> Evaluation:
    if not isinstance(evaluation, Evaluation):
        raise TypeError(f"the environment returned {type(evaluation).__name__}; expected leap.episode.Evaluation")
    if not isinstance(evaluation.verdict, Verdict):
        raise TypeError(f"Evaluation.verdict ({evaluation.verdict!r}) is not a leap.Verdict")
    if not isinstance(evaluation.speedup, (int, float)) or isinstance(evaluation.speedup, bool):
        raise TypeError(f"Evaluation.speedup ({evaluation.speedup!r}) is not a number (NaN = unknown)")
    if not isinstance(evaluation.feedback, str):
        raise TypeError(f"Evaluation.feedback is {type(evaluation.feedback).__name__}, not str")
    if not isinstance(evaluation.feedback_tokens, int) or not 0 <= evaluation.feedback_tokens <= _U32_MAX:
        raise ValueError(f"Evaluation.feedback_tokens ({evaluation.feedback_tokens!r}) must be an int in [0, 2^32 - 1]")
    if not isinstance(evaluation.speedup_unknown, str):
        raise TypeError(f"Evaluation.speedup_unknown is {type(evaluation.speedup_unknown).__name__}, not str")
    return evaluation


async def _one_turn(task: TaskT, so_far: list[Turn], key: SampleKey, policy: Policy[TaskT],
                    environment: Environment[TaskT], limiter: asyncio.Semaphore | None) -> Turn:
    """One evaluation: the policy's completion and the environment's verdict, failures recorded as turns."""
    if limiter is not None:
        async with limiter:
            return await _one_turn(task, so_far, key, policy, environment, None)
    try:
        completion = _check_completion(await policy(task, so_far, key))
    except Exception as error:  # a failing policy is a result of the step, not its end (see run_step)
        return _failure("policy", key, error, 0)
    try:
        evaluation = _check_evaluation(await environment(task, completion, key))
    except Exception as error:
        turn = _failure("environment", key, error, completion.tokens)
        turn.completion = completion
        return turn
    return Turn(completion, evaluation.verdict, float(evaluation.speedup), completion.tokens, evaluation.feedback,
                evaluation.feedback_tokens, speedup_unknown=evaluation.speedup_unknown)


async def _debug_turns(task: TaskT, turns: list[Turn], first: SampleKey, max_turns: int, seed: int,
                       policy: Policy[TaskT], environment: Environment[TaskT],
                       limiter: asyncio.Semaphore | None) -> None:
    """Turns 2..max_turns of an expanded sample, until one is correct. A sample's turns depend on its own
    earlier turns only, so samples do not wait for each other between turns (run_step's barrier between
    turns changes no result)."""
    sample_seed = _core._sample_seed
    for turn in range(2, max_turns + 1):
        if turns[-1].verdict == Verdict.correct:
            return
        key = SampleKey(first.task_index, first.task_id, first.sample, turn, first.step,
                        sample_seed(seed, first.step, first.task_id, first.sample, turn))
        turns.append(await _one_turn(task, turns, key, policy, environment, limiter))


# ---- checks before anything runs ------------------------------------------------------------------------

def _require_u64(name: str, value: int) -> None:
    if not isinstance(value, int) or not 0 <= value < _U64:
        raise ValueError(f"{name} ({value!r}) must be an int in [0, 2^64)")


def _require_callables(policy: object, environment: object) -> None:
    if not callable(policy):
        raise TypeError(f"policy ({policy!r}) is not callable: pass an async def (task, so_far, key) -> Completion")
    if not callable(environment):
        raise TypeError(f"environment ({environment!r}) is not callable: pass an async def (task, completion, key) "
                        f"-> Evaluation")


def _task_id_of(task: object, index: int) -> int:
    """As run_step: the task's integer `id` attribute when it has one, else its index."""
    value = getattr(task, "id", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else index


# ---- a whole step ---------------------------------------------------------------------------------------

async def run_episodes(tasks: Sequence[TaskT], policy: Policy[TaskT], environment: Environment[TaskT], *,
                       group_size: int = 8, max_turns: int = 3, gate: Gate | None = None,
                       order: KernelOrder | None = None,
                       normalization: AdvantageNormalization = AdvantageNormalization.none,
                       epsilon: float = 1e-6, gamma: float = 1.0, seed: int = 0, step: int = 0,
                       task_ids: Sequence[int] | None = None, max_concurrency: int | None = None) -> EpisodeBatch:
    """Runs one step of LEAP's rollout over `tasks`: G samples each, the gate after turn 1, feedback turns for
    the expanded groups; see the module's documentation.

    gate:       any leap gate; default FailBandGate.leap_default(group_size) (DCP as in LEAP's best ablation).
    order:      the rank advantage's order: KernelOrder() (the published order, default),
                KernelOrder.with_speedup(...), KernelOrder.with_speedup_and_tokens(...), any KernelOrder.
    normalization, epsilon: rescaling of the step's advantages (leap::RankAdvantage), none by default.
    gamma:      turn credit discount (leap::turn_advantages).
    seed, step: mixed into every SampleKey.seed; step is also the metrics' step.
    task_ids:   the tasks' ids (for seeds and for DifficultyTracker); default the task's int `id`, else index.
    max_concurrency: evaluations (policy + environment of one turn) in flight at most; None = no bound.
    """
    _core._validate_rollout_options(group_size, max_turns, gamma)
    _require_callables(policy, environment)
    _require_u64("seed", seed)
    _require_u64("step", step)
    if max_concurrency is not None and (not isinstance(max_concurrency, int) or max_concurrency < 1):
        raise ValueError(f"max_concurrency ({max_concurrency!r}) must be an int >= 1, or None for no bound")
    if len(tasks) > _U32_MAX:
        raise ValueError(f"{len(tasks)} tasks exceed 2^32 - 1")
    ids = [_task_id_of(task, t) for t, task in enumerate(tasks)] if task_ids is None else list(task_ids)
    if len(ids) != len(tasks):
        raise ValueError(f"task_ids has {len(ids)} entries for {len(tasks)} tasks")
    for t, task_id in enumerate(ids):
        _require_u64(f"task_ids[{t}]", task_id)
    chosen_gate: Gate = FailBandGate.leap_default(group_size) if gate is None else gate
    _core._validate_gate(chosen_gate)
    chosen_order = KernelOrder() if order is None else order
    chosen_order.validate()
    if not isinstance(normalization, AdvantageNormalization):
        raise TypeError(f"normalization ({normalization!r}) is not a leap.AdvantageNormalization")

    started = time.perf_counter()
    limiter = None if max_concurrency is None else asyncio.Semaphore(max_concurrency)
    G = group_size
    count = len(tasks) * G
    sample_seed = _core._sample_seed
    keys = [SampleKey(i // G, ids[i // G], i % G, 1, step, sample_seed(seed, step, ids[i // G], i % G, 1))
            for i in range(count)]
    trajectories: list[list[Turn]] = [[] for _ in range(count)]

    # 1. Turn 1 for every sample.
    firsts = await asyncio.gather(*(_one_turn(tasks[k.task_index], trajectories[i], k, policy, environment, limiter)
                                    for i, k in enumerate(keys)))
    for i, turn in enumerate(firsts):
        trajectories[i].append(turn)

    # 2. The gate on each group's turn-1 verdicts (the C++ gate, through assess_groups as run_step calls it).
    stats = [_core.group_stats([trajectories[t * G + s][0].verdict for s in range(G)]) for t in range(len(tasks))]
    decisions: list[GateDecision] = _core._assess_groups(chosen_gate, stats, ids, max_turns)

    # 3. Debugging turns for the unsolved samples of expanded groups.
    if max_turns > 1:
        await asyncio.gather(*(_debug_turns(tasks[keys[i].task_index], trajectories[i], keys[i], max_turns, seed,
                                            policy, environment, limiter)
                               for i in range(count)
                               if decisions[i // G].expands and trajectories[i][0].verdict != Verdict.correct))

    # 4-5. Outcomes, advantages, turn credit and metrics: leap::run_step over the recorded turns.
    turns = [turn for trajectory in trajectories for turn in trajectory]
    outcomes, advantages, per_turn, turn1_stats, metrics = _core._replay_step(
        ids, G, max_turns, gamma, seed, step, decisions, [len(t) for t in trajectories],
        [int(t.verdict) for t in turns], [t.speedup for t in turns], [t.tokens for t in turns],
        [t.feedback_tokens for t in turns], [0 if t.error is None else 1 if t.error == "policy" else 2 for t in turns],
        chosen_order, normalization, epsilon, time.perf_counter() - started)

    samples: list[ScoredEpisode] = []
    offset = 0
    for i, trajectory in enumerate(trajectories):
        n = len(trajectory)
        key = keys[i]
        samples.append(ScoredEpisode(key.task_index, key.task_id, key.sample, trajectory, outcomes[i],
                                     decisions[key.task_index], advantages[i], per_turn[offset:offset + n]))
        offset += n
    groups = [GroupResult(t, ids[t], turn1_stats[t], decisions[t]) for t in range(len(tasks))]
    return EpisodeBatch(samples, groups, metrics)


# ---- one sample at a time -------------------------------------------------------------------------------

class _Waiter(NamedTuple):
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[GateDecision]


class _Group:
    __slots__ = ("verdicts", "claimed", "task_id", "deadline", "waiters", "decision", "delivered")

    def __init__(self, group_size: int) -> None:
        self.verdicts: list[Verdict | None] = [None] * group_size
        self.claimed = [False] * group_size  # sample indices taken by join() or a report
        self.task_id = 0                     # the first report's
        self.deadline: float | None = None   # the first report's time + timeout
        self.waiters: list[_Waiter] = []
        self.decision: GateDecision | None = None
        self.delivered = 0  # members that have been given the decision


def _resolve(waiter: _Waiter, decision: GateDecision) -> None:
    def settle() -> None:
        if not waiter.future.done():
            waiter.future.set_result(decision)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is waiter.loop:
        settle()
    else:  # a member awaiting on another thread's loop
        try:
            waiter.loop.call_soon_threadsafe(settle)
        except RuntimeError:
            pass  # that loop is closed: nobody waits there any more


class GroupCoordinator:
    """Where the G samples of a group, each running its own episode, meet after turn 1 and get the gate's
    decision on their group. In-process: every member of a group must report to the same coordinator
    (samples of one group spread over processes never meet; see `timeout`). Safe to share between
    coroutines of one event loop and between threads each running its own loop.

    group_size: G, the members a group has.
    gate:       a group gate (FailBandGate, SeverityAwareGate, AlwaysExpand, NeverExpand) or a
                DifficultyTracker (which then observes groups in the order they are decided). Default
                FailBandGate.leap_default(group_size). BudgetedGate needs a whole step: use run_episodes.
    timeout:    seconds from a group's first report. When they pass before all G members reported, the
                group is decided on the members present: the gate sees a GroupStats of that size, unless
                `fallback` is given, which is then the decision (the band counts failures, so a partial
                group is pruned as easy sooner). Members reporting later get the same decision. None
                (default) waits for all G members for ever.
    fallback:   the decision for a group that timed out, e.g. GateDecision(Expansion.prune_budget,
                GateReason.never_expand) for "no debugging turns unless the whole group was seen".
    remember:   how many decided groups, not yet heard from by every member, are kept so late members get
                their decision; the oldest are forgotten first (a late member of a forgotten group starts
                it anew).
    """

    def __init__(self, group_size: int, gate: Gate | None = None, *, timeout: float | None = None,
                 fallback: GateDecision | None = None, remember: int = 65536) -> None:
        if not isinstance(group_size, int) or group_size < 1:
            raise ValueError(f"group_size ({group_size!r}) must be an int >= 1")
        chosen: Gate = FailBandGate.leap_default(group_size) if gate is None else gate
        _core._validate_gate(chosen)
        if not (_core._is_group_gate(chosen) or isinstance(chosen, DifficultyTracker)):
            raise ValueError(f"{chosen!r} decides over a whole step, which a coordinator of single groups never "
                             f"sees; use run_episodes, or its band (gate.band) here")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout ({timeout!r}) must be > 0 seconds, or None to wait for every member")
        if fallback is not None and not isinstance(fallback, GateDecision):
            raise TypeError(f"fallback ({fallback!r}) is not a leap.GateDecision")
        if remember < 1:
            raise ValueError(f"remember ({remember!r}) must be >= 1")
        self.group_size = group_size
        self.gate: Gate = chosen
        self.timeout = timeout
        self.fallback = fallback
        self._remember = remember
        self._lock = threading.Lock()
        self._open: dict[Hashable, _Group] = {}
        self._decided: OrderedDict[Hashable, _Group] = OrderedDict()
        self.timed_out = 0  # groups decided before all members reported

    def join(self, group_id: Hashable) -> int:
        """A sample index (0..G-1) of group `group_id` that no member has taken yet, for callers that do not
        know which member of its group a sample is (one agent loop per sample, given only the group's id).
        Raises ValueError when all G indices are taken."""
        with self._lock:
            group = self._decided.get(group_id) or self._open.get(group_id)
            if group is None:
                group = self._open[group_id] = _Group(self.group_size)
            for index, taken in enumerate(group.claimed):
                if not taken:
                    group.claimed[index] = True
                    return index
        raise ValueError(f"group {group_id!r} has its {self.group_size} members already")

    async def decide(self, group_id: Hashable, sample: int, verdict: Verdict, *, task_id: int = 0) -> GateDecision:
        """Reports sample `sample` (0..G-1, one's own pick or join()'s) of group `group_id` with its turn-1
        verdict and returns the gate's decision on the group, once all G members reported (or the timeout
        passed). task_id is the task's stable id, which DifficultyTracker tracks. Raises ValueError for a
        sample out of range or reported twice."""
        if not isinstance(verdict, Verdict):
            raise TypeError(f"verdict ({verdict!r}) is not a leap.Verdict")
        if not isinstance(sample, int) or not 0 <= sample < self.group_size:
            raise ValueError(f"sample ({sample!r}) must lie in [0, group_size ({self.group_size}))")
        _require_u64("task_id", task_id)
        loop = asyncio.get_running_loop()
        with self._lock:
            group = self._decided.get(group_id)
            if group is not None:  # a late member of a group decided on a timeout
                decision = self._deliver(group_id, group, sample, verdict)
                return decision
            group = self._open.get(group_id)
            if group is None:
                group = self._open[group_id] = _Group(self.group_size)
            if group.verdicts[sample] is not None:
                raise ValueError(f"sample {sample} of group {group_id!r} reported twice")
            if all(v is None for v in group.verdicts):  # the first report
                group.task_id = task_id
                group.deadline = None if self.timeout is None else time.monotonic() + self.timeout
            group.verdicts[sample] = verdict
            group.claimed[sample] = True
            if all(v is not None for v in group.verdicts):
                return self._close(group_id, group, complete=True)
            waiter = _Waiter(loop, loop.create_future())
            group.waiters.append(waiter)
            deadline = group.deadline
        if deadline is None:
            return await waiter.future
        try:
            return await asyncio.wait_for(asyncio.shield(waiter.future), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            with self._lock:
                if group.decision is None:
                    self.timed_out += 1
                    return self._close(group_id, group, complete=False)
            return await waiter.future

    def pending_groups(self) -> int:
        """Groups some members joined or reported to and that are not decided yet."""
        with self._lock:
            return len(self._open)

    # Called with the lock held.
    def _close(self, group_id: Hashable, group: _Group, *, complete: bool) -> GateDecision:
        present = [v for v in group.verdicts if v is not None]
        if not complete and self.fallback is not None:
            decision = self.fallback
        else:
            stats = _core.group_stats(present)
            decision = _core._assess_groups(self.gate, [stats], [group.task_id], 1)[0]
        group.decision = decision
        del self._open[group_id]
        group.delivered = len(present)  # the reporting member and the waiters
        for waiter in group.waiters:
            _resolve(waiter, decision)
        group.waiters.clear()
        if group.delivered < self.group_size:
            self._decided[group_id] = group
            while len(self._decided) > self._remember:
                self._decided.popitem(last=False)
        return decision

    def _deliver(self, group_id: Hashable, group: _Group, sample: int, verdict: Verdict) -> GateDecision:
        if group.verdicts[sample] is not None:
            raise ValueError(f"sample {sample} of group {group_id!r} reported twice")
        group.verdicts[sample] = verdict
        group.claimed[sample] = True
        group.delivered += 1
        if group.delivered >= self.group_size:
            del self._decided[group_id]
        assert group.decision is not None
        return group.decision


async def run_sample_episode(task: TaskT, policy: Policy[TaskT], environment: Environment[TaskT], *,
                             coordinator: GroupCoordinator, sample: int | None = None,
                             group_id: Hashable | None = None, task_index: int = 0,
                             task_id: int | None = None, max_turns: int = 3, step: int = 0, seed: int = 0,
                             limiter: asyncio.Semaphore | None = None) -> SampleEpisode:
    """One sample's episode: turn 1, the group's decision from `coordinator`, then (when the group expands)
    feedback turns until a turn is correct or max_turns is reached. Keys and seeds are those run_step would
    give sample `sample` of task `task_index` (task_id defaults to task_index) at `step` under `seed`.

    sample:    this sample's index in its group; None: the first free one (coordinator.join(group_id)).
    group_id:  what the group's members share (verl: the prompt's uid); default (step, task_id).
    limiter:   a semaphore shared by the caller's episodes, held during each evaluation.
    The episode carries no advantage: that needs the whole group (leap.rank_advantages on the outcomes).
    """
    _core._validate_rollout_options(coordinator.group_size, max_turns, 1.0)
    _require_callables(policy, environment)
    if sample is not None and (not isinstance(sample, int) or not 0 <= sample < coordinator.group_size):
        raise ValueError(f"sample ({sample!r}) must lie in [0, group_size ({coordinator.group_size}))")
    tid = task_index if task_id is None else task_id
    for name, value in (("task_index", task_index), ("task_id", tid), ("step", step), ("seed", seed)):
        _require_u64(name, value)
    gid: Hashable = (step, tid) if group_id is None else group_id
    if sample is None:
        sample = coordinator.join(gid)

    first = sample_key(task_index, sample, 1, task_id=tid, step=step, seed=seed)
    turns: list[Turn] = []
    turns.append(await _one_turn(task, turns, first, policy, environment, limiter))
    decision = await coordinator.decide(gid, sample, turns[0].verdict, task_id=tid)
    if decision.expands:
        await _debug_turns(task, turns, first, max_turns, seed, policy, environment, limiter)
    outcome = _core._summarize([t.verdict for t in turns], [t.speedup for t in turns], [t.tokens for t in turns])
    return SampleEpisode(task_index, tid, sample, turns, outcome, decision)
