# SPDX-License-Identifier: Apache-2.0
"""LEAP's multi-turn episode as a verl agent loop: turn 1 for every sample, DCP's decision for the
sample's uid group, then the sandbox's feedback and further turns for the expanded groups' unsolved
samples, up to max_turns.

verl builds agent loops in its AgentLoopWorker processes from an agent loop config file
(``actor_rollout_ref.rollout.agent.agent_loop_config_path``), so name this class there:

    # leap_agent.yaml
    - name: leap_kernel
      _target_: leap.verl_agent.LeapKernelAgentLoop
      max_turns: 3
      environment: leap.verl:sandbox_environment   # async (task, completion) -> Evaluation

and select it with ``actor_rollout_ref.rollout.agent.default_agent_loop=leap_kernel`` (or a dataset
column ``agent_name``). Importing this module with verl installed also registers the class under
``leap_kernel``; a verl that is installed but broken raises at import.

The task of a sample is ``extra_info["leap_task"]``, else ``reward_model["ground_truth"]`` (a built-in
task name or a task spec). The loop returns verl's AgentLoopOutput with the reward already set, so
verl's reward loop is skipped for it: ``reward_score`` is ``turn_and_speedup_score(solved turn,
max_turns, speedup)``, which ``leap_rank`` ranks in LEAP's order at
``+algorithm.leap_score_tolerance=32`` (see leap.verl). ``extra_fields["reward_extra_info"]`` carries
score, verdict, speedup, solved_turn, gate, gate_reason, expanded, partial_group and turns: verl puts
them in the batch's non_tensor_batch (rollout dumps, validation metrics); ``step_metrics`` turns them
into a training step's metrics. Feedback tokens have response_mask 0.

Groups and workers. DCP needs the turn-1 verdicts of a whole group. verl splits the repeated batch
(the n samples of a prompt are adjacent) into ``agent.num_workers`` equal contiguous chunks, one per
AgentLoopWorker process, so a group stays in one worker exactly when ``data.train_batch_size`` (and
the validation batch size) is a multiple of ``actor_rollout_ref.rollout.agent.num_workers``. The
samples of a uid in one worker meet here, in a process-wide coordinator, and the gate decides once
each of them has finished turn 1. A group split across workers is decided per part, each part on
its own verdicts with the band scaled to its size (t_min' = ceil(t_min * k / n), t_max' = k - (n -
t_max)), and its samples report partial_group = 1; a warning says which setting to change.
"""
from __future__ import annotations

import asyncio
import importlib
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Optional
from uuid import uuid4

import numpy as np


from .verl import Evaluation, score_fields, verl_installed

_core: Any = importlib.import_module("._core", __package__)  # the compiled module, typed by its .pyi stubs where installed

__all__ = ["GateDecision", "WorkerGroups", "agent_loop_class", "band_for", "step_metrics", "worker_groups"]

Environment = Callable[[Any, str], Awaitable[Any]]


@dataclass(frozen=True)
class GateDecision:
    """DCP's decision for a group (or, split across workers, for this worker's part of it)."""
    expansion: str     # expand | prune_easy | prune_catastrophic | prune_budget
    reason: str        # the gate's GateReason name
    size: int          # the members it decided on
    n_fail: int        # their turn-1 failures
    partial: bool      # fewer members than the configured group size (split across workers)

    @property
    def expands(self) -> bool:
        return self.expansion == "expand"


def band_for(size: int, group_size: int, t_min: Optional[int] = None, t_max: Optional[int] = None) -> Any:
    """The FailBandGate for `size` members of a group configured as `group_size` with the band
    (t_min, t_max) (default: LEAP's, leap.FailBandGate.leap_default(group_size)). A full group gets
    the band itself; a part of k members gets t_min' = ceil(t_min * k / n) and t_max' = k - (n - t_max),
    raised to t_min' when lower."""
    full = _core.FailBandGate.leap_default(group_size) if t_min is None or t_max is None else \
        _core.FailBandGate(int(t_min), int(t_max))
    if size == group_size:
        return full
    low = math.ceil(full.t_min * size / group_size)
    high = max(size - (group_size - full.t_max), low)
    return _core.FailBandGate(low, high)


@dataclass
class _Group:
    joined: int = 0
    verdicts: list[str] = field(default_factory=list)
    waiter: Optional["asyncio.Future[GateDecision]"] = None


@dataclass
class Member:
    key: Any
    group: _Group
    reported: bool = False


class WorkerGroups:
    """The samples of one uid that run in this process, and the gate's decision for them. join() is
    called at the start of an agent loop's run(), before its first await: verl's worker creates every
    sample's task before any of them runs, so every local member has joined before any finishes turn
    1. decide() waits until every joined member has reported its turn-1 verdict (or left)."""

    def __init__(self) -> None:
        self._open: dict[Any, _Group] = {}
        self.split_groups_seen = 0

    def join(self, key: Any) -> Member:
        group = self._open.setdefault(key, _Group())
        group.joined += 1
        return Member(key, group)

    async def decide(self, member: Member, verdict: str, group_size: int, t_min: Optional[int] = None,
                     t_max: Optional[int] = None) -> GateDecision:
        group = member.group
        if member.reported:
            raise RuntimeError("a member reports its turn-1 verdict once")
        member.reported = True
        group.verdicts.append(verdict)
        if group.waiter is None:
            group.waiter = asyncio.get_running_loop().create_future()
        waiter = group.waiter
        self._settle(member.key, group, group_size, t_min, t_max)
        return await asyncio.shield(waiter)

    def leave(self, member: Member, group_size: int, t_min: Optional[int] = None, t_max: Optional[int] = None) -> None:
        """A member that ends before reporting (an error): the others decide without it."""
        if member.reported:
            return
        member.reported = True
        member.group.joined -= 1
        self._settle(member.key, member.group, group_size, t_min, t_max)

    def _settle(self, key: Any, group: _Group, group_size: int, t_min: Optional[int], t_max: Optional[int]) -> None:
        if len(group.verdicts) < group.joined or group.waiter is None or group.waiter.done():
            if group.joined == 0 and self._open.get(key) is group:
                del self._open[key]
            return
        if self._open.get(key) is group:
            del self._open[key]  # a late joiner (none in verl's worker) starts a group of its own
        size = len(group.verdicts)
        stats = _core.group_stats([_core.Verdict.__members__[v] for v in group.verdicts])
        expansion, reason = band_for(size, group_size, t_min, t_max).assess(stats)
        partial = size < group_size
        if partial:
            self.split_groups_seen += 1
            warnings.warn(
                f"leap: a group of {group_size} samples has {size} in this agent-loop worker: DCP decided on "
                f"this part alone. Keep groups whole with data.train_batch_size (and the validation batch size) "
                f"a multiple of actor_rollout_ref.rollout.agent.num_workers", RuntimeWarning, stacklevel=2)
        group.waiter.set_result(GateDecision(expansion.name, reason.name, size, stats.n_fail, partial))


_worker_groups: Optional[WorkerGroups] = None


def worker_groups() -> WorkerGroups:
    """This process's coordinator (one per agent-loop worker process)."""
    global _worker_groups
    if _worker_groups is None:
        _worker_groups = WorkerGroups()
    return _worker_groups


def _resolve(environment: Any) -> Environment:
    if callable(environment):
        return environment  # type: ignore[no-any-return]
    module_name, _, attribute = str(environment).partition(":")
    if not attribute:
        raise ValueError(f"environment {environment!r}: expected 'module:function'")
    return getattr(importlib.import_module(module_name), attribute)  # type: ignore[no-any-return]


def _evaluation(value: Any) -> Evaluation:
    if isinstance(value, Evaluation):
        return value
    if isinstance(value, Mapping):
        speedup = value.get("speedup")
        return Evaluation(str(value["verdict"]), float(speedup) if speedup is not None else math.nan,
                          str(value.get("feedback") or ""))
    verdict, speedup, feedback = value
    return Evaluation(str(getattr(verdict, "name", verdict)), float(speedup) if speedup is not None else math.nan,
                      str(feedback or ""))


_VERDICT_RANK = {name: rank for rank, name in enumerate(("compile_error", "runtime_error", "timeout",
                                                          "wrong_answer", "correct"))}

DEFAULT_FEEDBACK = ("Your kernel was evaluated: {verdict}.\n{feedback}\n"
                    "Fix the kernel and answer with the whole corrected kernel in one ```cuda block.")


def agent_loop_class(base: type, output_type: type, register: Optional[Callable[[str], Callable[[type], type]]] = None,
                     name: str = "leap_kernel") -> type:
    """The agent loop as a subclass of verl's AgentLoopBase (`base`) returning `output_type`
    (AgentLoopOutput), registered under `name` with `register` when given."""

    class LeapKernelAgentLoop(base):  # type: ignore[misc]
        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any, *,
                     max_turns: int = 3, t_min: Optional[int] = None, t_max: Optional[int] = None,
                     environment: Any = "leap.verl:sandbox_environment", feedback_template: str = DEFAULT_FEEDBACK,
                     max_feedback_chars: int = 2000, **kwargs: Any) -> None:
            super().__init__(trainer_config, server_manager, tokenizer, processor, **kwargs)
            rollout = self.config.actor_rollout_ref.rollout
            self.response_length = int(rollout.response_length)
            self.group_size = int(rollout.n)
            self.max_turns = int(max_turns)
            if self.max_turns < 1:
                raise ValueError(f"max_turns ({max_turns}) must be >= 1")
            self.t_min, self.t_max = t_min, t_max
            self.environment = _resolve(environment)
            self.feedback_template = feedback_template
            self.max_feedback_chars = int(max_feedback_chars)

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
            groups = worker_groups()
            member = groups.join(kwargs["uid"])  # before any await: see WorkerGroups
            try:
                return await self._episode(member, sampling_params, kwargs)
            finally:
                groups.leave(member, self.group_size, self.t_min, self.t_max)

        async def _episode(self, member: Member, sampling_params: dict[str, Any], kwargs: Mapping[str, Any]) -> Any:
            extra_info = kwargs.get("extra_info") or {}
            task = extra_info.get("leap_task") if isinstance(extra_info, Mapping) else None
            if task is None:
                task = (kwargs.get("reward_model") or {}).get("ground_truth")
            prompt_ids = list(await self.apply_chat_template(list(kwargs["raw_prompt"])))
            context = list(prompt_ids)
            response_ids: list[int] = []
            response_mask: list[int] = []
            logprobs: list[float] = []
            request_id = uuid4().hex
            solved_turn, best, speedup, turns = 0, "compile_error", math.nan, 0
            decision: Optional[GateDecision] = None
            timing = {"generate_sequences": 0.0, "tool_calls": 0.0}
            for turn in range(1, self.max_turns + 1):
                started = time.perf_counter()
                output = await self.server_manager.generate(request_id=request_id, prompt_ids=context,
                                                            sampling_params=sampling_params)
                timing["generate_sequences"] += time.perf_counter() - started
                tokens = list(output.token_ids)
                context += tokens
                response_ids += tokens
                response_mask += [1] * len(tokens)
                logprobs += list(output.log_probs) if output.log_probs else [0.0] * len(tokens)
                turns = turn
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                started = time.perf_counter()
                evaluation = _evaluation(await self.environment(task, text))
                timing["tool_calls"] += time.perf_counter() - started
                if _VERDICT_RANK[evaluation.verdict] > _VERDICT_RANK[best]:
                    best = evaluation.verdict
                if evaluation.verdict == "correct":
                    solved_turn, speedup = turn, evaluation.speedup
                if turn == 1:
                    decision = await worker_groups().decide(member, evaluation.verdict, self.group_size,
                                                            self.t_min, self.t_max)
                if solved_turn or turn == self.max_turns or decision is None or not decision.expands:
                    break
                if len(response_mask) >= self.response_length:
                    break
                message = self.feedback_template.format(verdict=evaluation.verdict,
                                                        feedback=evaluation.feedback[: self.max_feedback_chars])
                feedback_ids = list(await self.apply_chat_template([{"role": "user", "content": message}],
                                                                   remove_system_prompt=True))
                if len(response_mask) + len(feedback_ids) >= self.response_length:
                    break
                context += feedback_ids
                response_ids += feedback_ids
                response_mask += [0] * len(feedback_ids)
                logprobs += [0.0] * len(feedback_ids)
            assert decision is not None
            fields = score_fields(solved_turn, self.max_turns, best, speedup)
            fields.update(gate=decision.expansion, gate_reason=decision.reason, expanded=int(decision.expands),
                          partial_group=int(decision.partial), turns=turns)
            limit = self.response_length
            return output_type(prompt_ids=prompt_ids, response_ids=response_ids[:limit],
                               response_mask=response_mask[:limit],
                               response_logprobs=logprobs[:limit] if logprobs else None,
                               reward_score=fields["score"], num_turns=2 * turns,
                               metrics={**timing, "num_preempted": -1},
                               extra_fields={"reward_extra_info": fields})

    LeapKernelAgentLoop.__module__ = __name__
    LeapKernelAgentLoop.__qualname__ = "LeapKernelAgentLoop"
    if register is not None:
        register(name)(LeapKernelAgentLoop)
    return LeapKernelAgentLoop


def step_metrics(non_tensor_batch: Mapping[str, Any], max_turns: Optional[int] = None) -> dict[str, float]:
    """A training step's LEAP metrics from the batch's non_tensor_batch (the agent loop's extra
    fields): solved fraction by turn, expanded and split groups, mean speedup of the solved."""
    solved = np.asarray(non_tensor_batch["solved_turn"], dtype=np.int64)
    turns = int(max_turns if max_turns is not None else max(int(solved.max(initial=0)), 1))
    metrics = {f"leap/solved@{t}": float(np.mean((solved > 0) & (solved <= t))) for t in range(1, turns + 1)}
    uids = np.asarray(non_tensor_batch["uid"]) if "uid" in non_tensor_batch else None
    expanded = np.asarray(non_tensor_batch["expanded"], dtype=np.int64)
    partial = np.asarray(non_tensor_batch["partial_group"], dtype=np.int64)
    if uids is not None:
        _, first = np.unique(uids, return_index=True)
        metrics["leap/expanded_groups"] = float(np.mean(expanded[first] > 0)) if len(first) else 0.0
    metrics["leap/expanded_samples"] = float(np.mean(expanded)) if len(expanded) else 0.0
    metrics["leap/split_samples"] = float(np.mean(partial)) if len(partial) else 0.0
    speedup = np.asarray(non_tensor_batch["speedup"], dtype=np.float64)[solved > 0]
    speedup = speedup[np.isfinite(speedup)]
    metrics["leap/speedup_mean"] = float(np.mean(speedup)) if len(speedup) else math.nan
    return metrics


def _define() -> Optional[type]:
    """Defines and registers the agent loop against verl's AgentLoopBase when verl is installed."""
    if not verl_installed():
        return None
    try:
        module = importlib.import_module("verl.experimental.agent_loop.agent_loop")
    except Exception as error:
        raise ImportError(f"leap.verl_agent: verl is installed but verl.experimental.agent_loop.agent_loop failed "
                          f"to import ({type(error).__name__}: {error}); the leap_kernel agent loop cannot be "
                          f"defined") from error
    # An agent loop config file's entry of this name (loaded by the worker before this import, and
    # carrying the constructor's settings) is kept: verl's register() would replace it.
    keep = "leap_kernel" in getattr(module, "_agent_loop_registry", {})
    return agent_loop_class(module.AgentLoopBase, module.AgentLoopOutput, None if keep else module.register)


_defined = _define()
if _defined is not None:
    LeapKernelAgentLoop = _defined


def __getattr__(name: str) -> Any:
    if name == "LeapKernelAgentLoop":
        raise ImportError("leap.verl_agent.LeapKernelAgentLoop needs verl (verl.experimental.agent_loop); "
                          "verl is not installed here. agent_loop_class(base, output_type) builds it on any base")
    raise AttributeError(f"module 'leap.verl_agent' has no attribute {name!r}")

