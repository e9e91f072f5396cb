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

Failures: a policy or environment that raises does not abort the step. A policy that raises (or returns
the wrong type) gives a runtime_error turn whose feedback names the task, sample and turn and carries the
message (``Turn.error == "policy"``, counted in ``metrics.policy_errors``). Cancellation is not a failure:
it propagates. Misuse (bad options, a bad gate, a policy that is not callable) raises ValueError or
TypeError before anything runs.

Environment failures are never the candidate's failure, as in ``leap::run_step``. An environment that
raises, returns the wrong type, or returns ``Evaluation.environment_failed(why)`` has not judged the
completion: the same completion is evaluated again, up to ``environment_retries`` more times
(``SampleKey.attempt`` counts them), then the turn is recorded with ``Turn.environment_failure`` set
(``Turn.error == "environment"``) and the sample is masked: it ends there, a turn-1 failure is left out of
its group's gate statistics, it is left out of the rank (the judged members are ranked among themselves,
(wins - losses) / (G' - 1); a group with one judged member gives it 0), its advantage is 0 on every turn and
``ScoredEpisode.masked`` tells the trainer to leave it out of the loss. ``metrics.environment_errors``
counts every failed attempt, ``environment_retries`` the attempts made again, ``masked_trajectories`` the
masked samples. An environment must return every verdict the candidate's own text determines (no kernel,
a compile error, a kernel that crashes): were those failures of the environment, a candidate could choose
to be masked instead of losing.
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
_MAX_ENVIRONMENT_RETRIES = 16  # leap::RolloutOptions::max_environment_retries


class SampleKey(NamedTuple):
    """Which evaluation a policy or environment call belongs to (leap::SampleKey)."""
    task_index: int  # position of the task in this step's batch
    task_id: int     # the task's id (stable across steps), else task_index
    sample: int      # 0..G-1 within the task's group
    turn: int        # 1-based
    step: int        # the step's index
    seed: int        # a function of (seed, step, task_id, sample, turn) only, as run_step derives it
    attempt: int = 0  # environment calls only: 0, then k on the k-th retry after an environment failure


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
    """What the environment said of one completion: a verdict, or (environment_failure) that it could not
    judge it."""
    verdict: Verdict
    speedup: float = math.nan  # reference time / candidate time; NaN = unknown
    feedback: str = ""         # shown to the policy on the next turn
    feedback_tokens: int = 0   # size of that feedback in tokens, when the environment knows it
    # The environment could not judge the completion (its transport or infrastructure failed): verdict,
    # speedup and feedback_tokens are ignored, feedback says why; the runner retries, then masks the
    # sample. Never for what the candidate's text determines.
    environment_failure: bool = False
    # Why speedup is NaN, as the environment says it (the sandbox: "not_correct", "not_requested",
    # "no_room", "below_floor", "not_measured"); "" when it is known or not said. An unknown speedup
    # ranks below every known one whatever the reason.
    speedup_unknown: str = ""

    @classmethod
    def environment_failed(cls, why: str) -> Evaluation:
        """The environment could not judge this completion, because of `why` (leap::Evaluation::environment_failed)."""
        return cls(Verdict.compile_error, math.nan, why, 0, True)


@dataclass
class Turn:
    """One turn of an episode: the completion (None when the policy raised) and its evaluation."""
    completion: Completion | None
    verdict: Verdict
    speedup: float
    tokens: int
    feedback: str
    feedback_tokens: int = 0
    # "policy" when the policy raised (a runtime_error turn); "environment" when the environment failed on
    # every attempt (environment_failure: no verdict, the sample is masked).
    error: str | None = None
    retries: int = 0  # environment calls made again for this turn after an environment failure
    speedup_unknown: str = ""  # Evaluation.speedup_unknown: why speedup is NaN, when the environment said

    @property
    def environment_failure(self) -> bool:
        """The environment could not judge this turn: there is no verdict (verdict is a placeholder)."""
        return self.error == "environment"

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

    @property
    def masked(self) -> bool:
        """The environment failed on a turn: the sample is not ranked and must not be trained (a loss mask)."""
        return any(turn.environment_failure for turn in self.turns)


@dataclass
class ScoredEpisode(SampleEpisode):
    """A sample of a whole step, with its advantage (before turn credit) and one advantage per turn
    (all 0 when masked)."""
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

    @property
    def masks(self) -> list[bool]:
        """Per sample: True when it is masked (an environment failure), to leave out of the loss."""
        return [s.masked for s in self.samples]


# ---- one turn ------------------------------------------------------------------------------------------

def _where(key: SampleKey) -> str:
    return f"on task {key.task_index} (id {key.task_id}), sample {key.sample}, turn {key.turn}: "


def _failure(who: str, key: SampleKey, error: BaseException, tokens: int) -> Turn:
    message = f"leap.episode: the {who} raised {_where(key)}{type(error).__name__}: {error}"
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
    if evaluation.environment_failure:
        return evaluation
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
                    environment: Environment[TaskT], limiter: asyncio.Semaphore | None, retries: int) -> Turn:
    """One evaluation: the policy's completion and the environment's verdict, failures recorded as turns. An
    environment failure is evaluated again, up to `retries` times, then recorded as one (see the module)."""
    if limiter is not None:
        async with limiter:
            return await _one_turn(task, so_far, key, policy, environment, None, retries)
    try:
        completion = _check_completion(await policy(task, so_far, key))
    except Exception as error:  # a failing policy is a result of the step, not its end (see run_step)
        return _failure("policy", key, error, 0)
    for attempt in range(retries + 1):
        try:
            evaluation = _check_evaluation(await environment(task, completion, key._replace(attempt=attempt)))
        except Exception as error:
            failure = f"the environment raised {_where(key)}{type(error).__name__}: {error}"
        else:
            if not evaluation.environment_failure:
                return Turn(completion, evaluation.verdict, float(evaluation.speedup), completion.tokens,
                            evaluation.feedback, evaluation.feedback_tokens, None, attempt, evaluation.speedup_unknown)
            failure = f"the environment could not judge it {_where(key)}{evaluation.feedback}"
    message = f"leap.episode: {failure} (attempt {retries + 1} of {retries + 1}; the sample is masked)"
    return Turn(completion, Verdict.runtime_error, math.nan, completion.tokens, message, 0, "environment", retries)


async def _debug_turns(task: TaskT, turns: list[Turn], first: SampleKey, max_turns: int, seed: int,
                       policy: Policy[TaskT], environment: Environment[TaskT],
                       limiter: asyncio.Semaphore | None, retries: int) -> None:
    """Turns 2..max_turns of an expanded sample, until one is correct or the environment failed. A sample's
    turns depend on its own earlier turns only, so samples do not wait for each other between turns
    (run_step's barrier between turns changes no result)."""
    sample_seed = _core._sample_seed
    for turn in range(2, max_turns + 1):
        if turns[-1].verdict == Verdict.correct or turns[-1].environment_failure:
            return
        key = SampleKey(first.task_index, first.task_id, first.sample, turn, first.step,
                        sample_seed(seed, first.step, first.task_id, first.sample, turn))
        turns.append(await _one_turn(task, turns, key, policy, environment, limiter, retries))


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


def _require_retries(environment_retries: int) -> None:
    if not isinstance(environment_retries, int) or isinstance(environment_retries, bool) or \
            not 0 <= environment_retries <= _MAX_ENVIRONMENT_RETRIES:
        raise ValueError(f"environment_retries ({environment_retries!r}) must be an int in [0, "
                         f"{_MAX_ENVIRONMENT_RETRIES}]")


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
                       task_ids: Sequence[int] | None = None, max_concurrency: int | None = None,
                       environment_retries: int = 1) -> EpisodeBatch:
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
    environment_retries: evaluations of the same completion again after an environment failure, before
                the sample is masked (0 to 16; leap::RolloutOptions::environment_retries).
    """
    _core._validate_rollout_options(group_size, max_turns, gamma)
    _require_retries(environment_retries)
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
    firsts = await asyncio.gather(*(_one_turn(tasks[k.task_index], trajectories[i], k, policy, environment, limiter,
                                              environment_retries)
                                    for i, k in enumerate(keys)))
    for i, turn in enumerate(firsts):
        trajectories[i].append(turn)

    # 2. The gate on each group's turn-1 verdicts (the C++ gate, through assess_groups as run_step calls it);
    # an environment failure is no verdict and is left out.
    stats = [_core.group_stats([trajectories[t * G + s][0].verdict for s in range(G)
                                if not trajectories[t * G + s][0].environment_failure]) for t in range(len(tasks))]
    decisions: list[GateDecision] = _core._assess_groups(chosen_gate, stats, ids, max_turns)

    # 3. Debugging turns for the unsolved samples of expanded groups (a masked sample has ended).
    if max_turns > 1:
        await asyncio.gather(*(_debug_turns(tasks[keys[i].task_index], trajectories[i], keys[i], max_turns, seed,
                                            policy, environment, limiter, environment_retries)
                               for i in range(count)
                               if decisions[i // G].expands and trajectories[i][0].verdict != Verdict.correct
                               and not trajectories[i][0].environment_failure))

    # 4-5. Outcomes, advantages, turn credit and metrics: leap::run_step over the recorded turns.
    turns = [turn for trajectory in trajectories for turn in trajectory]
    outcomes, advantages, per_turn, turn1_stats, metrics = _core._replay_step(
        ids, G, max_turns, gamma, seed, step, decisions, [len(t) for t in trajectories],
        [int(t.verdict) for t in turns], [t.speedup for t in turns], [t.tokens for t in turns],
        [t.feedback_tokens for t in turns], [0 if t.error is None else 1 if t.error == "policy" else 2 for t in turns],
        chosen_order, normalization, epsilon, time.perf_counter() - started, [t.retries for t in turns],
        environment_retries)

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


class _NoVerdict:
    """A member that reported without a verdict (its environment failed): present, but not counted."""


_NO_VERDICT = _NoVerdict()


class _Group:
    __slots__ = ("verdicts", "claimed", "task_id", "deadline", "waiters", "decision", "delivered")

    def __init__(self, group_size: int) -> None:
        self.verdicts: list[Verdict | _NoVerdict | None] = [None] * group_size  # None: not reported yet
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

    async def decide(self, group_id: Hashable, sample: int, verdict: Verdict | None, *,
                     task_id: int = 0) -> GateDecision:
        """Reports sample `sample` (0..G-1, one's own pick or join()'s) of group `group_id` with its turn-1
        verdict and returns the gate's decision on the group, once all G members reported (or the timeout
        passed). verdict None: the environment could not judge the member's turn 1; it counts as reported but
        is left out of the gate's statistics. task_id is the task's stable id, which DifficultyTracker
        tracks. Raises ValueError for a sample out of range or reported twice."""
        if verdict is not None and not isinstance(verdict, Verdict):
            raise TypeError(f"verdict ({verdict!r}) is not a leap.Verdict (or None: no verdict)")
        reported: Verdict | _NoVerdict = _NO_VERDICT if verdict is None else verdict
        if not isinstance(sample, int) or not 0 <= sample < self.group_size:
            raise ValueError(f"sample ({sample!r}) must lie in [0, group_size ({self.group_size}))")
        _require_u64("task_id", task_id)
        loop = asyncio.get_running_loop()
        with self._lock:
            group = self._decided.get(group_id)
            if group is not None:  # a late member of a group decided on a timeout
                decision = self._deliver(group_id, group, sample, reported)
                return decision
            group = self._open.get(group_id)
            if group is None:
                group = self._open[group_id] = _Group(self.group_size)
            if group.verdicts[sample] is not None:
                raise ValueError(f"sample {sample} of group {group_id!r} reported twice")
            if all(v is None for v in group.verdicts):  # the first report
                group.task_id = task_id
                group.deadline = None if self.timeout is None else time.monotonic() + self.timeout
            group.verdicts[sample] = reported
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
            stats = _core.group_stats([v for v in present if isinstance(v, Verdict)])
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

    def _deliver(self, group_id: Hashable, group: _Group, sample: int, verdict: Verdict | _NoVerdict) -> GateDecision:
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
                             limiter: asyncio.Semaphore | None = None, environment_retries: int = 1) -> SampleEpisode:
    """One sample's episode: turn 1, the group's decision from `coordinator`, then (when the group expands)
    feedback turns until a turn is correct or max_turns is reached. Keys and seeds are those run_step would
    give sample `sample` of task `task_index` (task_id defaults to task_index) at `step` under `seed`.

    sample:    this sample's index in its group; None: the first free one (coordinator.join(group_id)).
    group_id:  what the group's members share (verl: the prompt's uid); default (step, task_id).
    limiter:   a semaphore shared by the caller's episodes, held during each evaluation.
    environment_retries: evaluations of the same completion again after an environment failure (0 to 16).
    The episode carries no advantage: that needs the whole group (leap.rank_advantages on the outcomes of
    the members that are not masked). A masked episode (episode.masked: the environment failed on every
    attempt) reports no verdict to the coordinator when it happens at turn 1, and ends there.
    """
    _core._validate_rollout_options(coordinator.group_size, max_turns, 1.0)
    _require_retries(environment_retries)
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
    turns.append(await _one_turn(task, turns, first, policy, environment, limiter, environment_retries))
    decision = await coordinator.decide(gid, sample, None if turns[0].environment_failure else turns[0].verdict,
                                        task_id=tid)
    if decision.expands:
        await _debug_turns(task, turns, first, max_turns, seed, policy, environment, limiter, environment_retries)
    outcome = _core._summarize([t.verdict for t in turns], [t.speedup for t in turns], [t.tokens for t in turns],
                               [t.environment_failure for t in turns])
    return SampleEpisode(task_index, tid, sample, turns, outcome, decision)
