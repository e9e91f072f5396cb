# SPDX-License-Identifier: Apache-2.0
"""LEAP's multi-turn episode as a verl agent loop: each sample's episode is leap.run_sample_episode
(turn 1, DCP's decision for the sample's uid group from a leap.GroupCoordinator, then the sandbox's
feedback and further turns for the expanded groups' unsolved samples, up to max_turns).

verl builds agent loops in its AgentLoopWorker processes from an agent loop config file
(``actor_rollout_ref.rollout.agent.agent_loop_config_path``), so name this class there:

    # leap_agent.yaml
    - name: leap_kernel
      _target_: leap.verl_agent.LeapKernelAgentLoop
      max_turns: 3
      environment: leap.verl_agent:sandbox   # async (task, leap.Completion, leap.SampleKey) -> leap.Evaluation

and select it with ``actor_rollout_ref.rollout.agent.default_agent_loop=leap_kernel`` (or a dataset
column ``agent_name``). Importing this module with verl installed also registers the class under
``leap_kernel``; a verl that is installed but broken raises at import.

The task of a sample is ``extra_info["leap_task"]``, else ``reward_model["ground_truth"]`` (a built-in
task name or a task spec). The loop returns verl's AgentLoopOutput with the reward already set, so
verl's reward loop is skipped for it: ``reward_score`` is ``turn_and_speedup_score(solved turn,
max_turns, speedup)``, which ``leap_rank`` ranks in LEAP's order at
``+algorithm.leap_score_tolerance=32`` (see leap.verl). ``extra_fields["reward_extra_info"]`` carries
score, verdict, speedup, solved_turn, masked, gate, gate_reason, expanded, partial_group and turns: verl
puts them in the batch's non_tensor_batch (rollout dumps, validation metrics); ``step_metrics`` turns
them into a training step's metrics. Feedback tokens have response_mask 0.

Environment failures. An evaluation without a verdict (a dead-lettered or timed-out request, no GPU, a
harness fault) is evaluated again (``environment_retries``, default 1), then the sample is masked
(leap.episode): it reports no verdict to its group's gate, ends, and is returned with ``masked`` = 1, a
score of 0 and a response_mask of all 0, so verl's loss skips every token of it (policy loss, KL and
entropy are all taken under response_mask) and leap_rank / leap_grpo leave it out of its group.

Groups and workers. DCP needs the turn-1 verdicts of a whole group. verl splits the repeated batch
(the n samples of a prompt are adjacent) into ``agent.num_workers`` equal contiguous chunks, one per
AgentLoopWorker process, so a group stays in one worker exactly when ``data.train_batch_size`` (and
the validation batch size) is a multiple of ``actor_rollout_ref.rollout.agent.num_workers``. The
samples of a uid in one worker are counted as they start (WorkerGroups) and meet at a
GroupCoordinator of that many members, which decides once each has finished turn 1. A group split
across workers is thus decided per part, at once, each part on its own verdicts with the band scaled
to its size (t_min' = ceil(t_min * k / n), t_max' = k - (n - t_max)); its samples report
partial_group = 1 and a warning says which setting to change. (gate_timeout, default 1800 s: a
member that never reports, e.g. cancelled, stops holding its group after that long.)
"""
from __future__ import annotations

import importlib
import math
import time
import warnings
from typing import Any, Callable, Mapping, Optional, cast
from uuid import uuid4

import numpy as np

from ._multiturn import DEFAULT_FEEDBACK, band_for
from .episode import Completion, Evaluation, GroupCoordinator, SampleKey, run_sample_episode
from .scores import score_fields
from .verl import sandbox_environment, verl_installed

_core: Any = importlib.import_module("._core", __package__)  # the compiled module, typed by its .pyi stubs where installed

__all__ = ["DEFAULT_FEEDBACK", "WorkerGroups", "agent_loop_class", "band_for", "sandbox", "step_metrics", "worker_groups"]

class WorkerGroups:
    """The members of each uid group that run in this process, and the GroupCoordinator (leap.episode)
    that decides for them. join() is called at the start of an agent loop's run(), before its first
    await: verl's worker creates every sample's task before any of them runs, so when a member finishes
    turn 1 every local member has joined and their count is final. That count picks the coordinator:
    the configured group size (the whole group is here) or a part's size with band_for's band."""

    def __init__(self) -> None:
        self._members: dict[Any, int] = {}
        self._coordinators: dict[tuple[Any, ...], GroupCoordinator] = {}
        self.split_groups_seen = 0

    def join(self, key: Any) -> int:
        """Counts a member in; returns its index among this process's members of the group."""
        index = self._members.get(key, 0)
        self._members[key] = index + 1
        return index

    def leave(self, key: Any) -> None:
        left = self._members.get(key, 0) - 1
        if left > 0:
            self._members[key] = left
        else:
            self._members.pop(key, None)

    def members(self, key: Any) -> int:
        return self._members.get(key, 0)

    def coordinator(self, key: Any, group_size: int, t_min: Optional[int], t_max: Optional[int],
                    timeout: Optional[float]) -> tuple[GroupCoordinator, bool]:
        size = self._members[key]
        partial = size < group_size
        settings = (size, group_size, t_min, t_max, timeout)
        coordinator = self._coordinators.get(settings)
        if coordinator is None:
            coordinator = GroupCoordinator(size, band_for(size, group_size, t_min, t_max), timeout=timeout)
            self._coordinators[settings] = coordinator
        return coordinator, partial


class _PartCoordinator:
    """What run_sample_episode asks of a coordinator (group_size, decide), for one member: its
    decision comes from this process's coordinator for the group's part, chosen when it reports."""

    def __init__(self, groups: WorkerGroups, group_size: int, t_min: Optional[int], t_max: Optional[int],
                 timeout: Optional[float]) -> None:
        self.groups, self.group_size, self.t_min, self.t_max, self.timeout = groups, group_size, t_min, t_max, timeout
        self.partial = False

    def join(self, group_id: Any) -> int:
        raise RuntimeError("the agent loop passes each member's index itself")

    async def decide(self, group_id: Any, sample: int, verdict: Any, *, task_id: int = 0) -> Any:
        coordinator, self.partial = self.groups.coordinator(group_id, self.group_size, self.t_min, self.t_max,
                                                            self.timeout)
        if self.partial and self.groups.members(group_id) == sample + 1:
            self.groups.split_groups_seen += 1
            warnings.warn(
                f"leap: a group of {self.group_size} samples has {self.groups.members(group_id)} in this agent-loop "
                f"worker: DCP decided on this part alone. Keep groups whole with data.train_batch_size (and the "
                f"validation batch size) a multiple of actor_rollout_ref.rollout.agent.num_workers",
                RuntimeWarning, stacklevel=2)
        return await coordinator.decide(group_id, sample, verdict, task_id=task_id)


_worker_groups: Optional[WorkerGroups] = None


def worker_groups() -> WorkerGroups:
    """This process's census of groups (one per agent-loop worker process)."""
    global _worker_groups
    if _worker_groups is None:
        _worker_groups = WorkerGroups()
    return _worker_groups


def _resolve(environment: Any) -> Any:
    if callable(environment):
        return environment
    module_name, _, attribute = str(environment).partition(":")
    if not attribute:
        raise ValueError(f"environment {environment!r}: expected 'module:function'")
    return getattr(importlib.import_module(module_name), attribute)


async def sandbox(task: Any, completion: Completion, key: SampleKey) -> Evaluation:
    """The default environment: this process's leap.environment.SandboxEnvironment (leap.verl's pool)."""
    result: Evaluation = await sandbox_environment()(task, completion, key)
    return result


class _OutOfBudget(RuntimeError):
    """The response has no room for another turn (actor_rollout_ref.rollout.response_length)."""


def agent_loop_class(base: type, output_type: type, register: Optional[Callable[[str], Callable[[type], type]]] = None,
                     name: str = "leap_kernel") -> type:
    """The agent loop as a subclass of verl's AgentLoopBase (`base`) returning `output_type`
    (AgentLoopOutput), registered under `name` with `register` when given."""

    class LeapKernelAgentLoop(base):  # type: ignore[misc]
        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any, *,
                     max_turns: int = 3, t_min: Optional[int] = None, t_max: Optional[int] = None,
                     environment: Any = "leap.verl_agent:sandbox", feedback_template: str = DEFAULT_FEEDBACK,
                     gate_timeout: Optional[float] = 1800.0, environment_retries: int = 1, **kwargs: Any) -> None:
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
            self.gate_timeout = gate_timeout
            self.environment_retries = int(environment_retries)

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
            groups = worker_groups()
            uid = kwargs["uid"]
            member = groups.join(uid)  # before any await: see WorkerGroups
            try:
                return await self._episode(uid, member, sampling_params, kwargs)
            finally:
                groups.leave(uid)

        async def _episode(self, uid: Any, member: int, sampling_params: dict[str, Any],
                           kwargs: Mapping[str, Any]) -> Any:
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
            timing = {"generate_sequences": 0.0, "tool_calls": 0.0}
            with_logprobs: list[bool] = []  # the server returned log-probs (sampling logprobs=True)

            async def policy(task: Any, so_far: Any, key: SampleKey) -> Completion:
                if so_far:  # the sandbox's feedback on the last turn, as a user message the loss skips
                    last = so_far[-1]
                    message = self.feedback_template.format(verdict=last.verdict.name, feedback=last.feedback)
                    ids = list(await self.apply_chat_template([{"role": "user", "content": message}],
                                                              remove_system_prompt=True))
                    if len(response_mask) + len(ids) >= self.response_length:
                        raise _OutOfBudget(f"no room for turn {key.turn} within response_length")
                    context.extend(ids)
                    response_ids.extend(ids)
                    response_mask.extend([0] * len(ids))
                    logprobs.extend([0.0] * len(ids))
                started = time.perf_counter()
                output = await self.server_manager.generate(request_id=request_id, prompt_ids=list(context),
                                                            sampling_params=sampling_params)
                timing["generate_sequences"] += time.perf_counter() - started
                tokens = list(output.token_ids)
                context.extend(tokens)
                response_ids.extend(tokens)
                response_mask.extend([1] * len(tokens))
                if output.log_probs:
                    with_logprobs.append(True)
                logprobs.extend(list(output.log_probs) if output.log_probs else [0.0] * len(tokens))
                return Completion(self.tokenizer.decode(tokens, skip_special_tokens=True), len(tokens))

            async def environment(task: Any, completion: Completion, key: SampleKey) -> Evaluation:
                started = time.perf_counter()
                try:
                    result: Evaluation = await self.environment(task, completion, key)
                    return result
                finally:
                    timing["tool_calls"] += time.perf_counter() - started

            coordinator = _PartCoordinator(worker_groups(), self.group_size, self.t_min, self.t_max,
                                           self.gate_timeout)
            episode = await run_sample_episode(task, policy, environment, coordinator=cast(Any, coordinator),
                                               sample=member, group_id=uid, max_turns=self.max_turns,
                                               environment_retries=self.environment_retries)
            outcome, decision = episode.outcome, episode.decision
            turns = sum(1 for turn in episode.turns if turn.completion is not None)
            fields = score_fields(outcome.solved_turn, self.max_turns, outcome.best_verdict.name, outcome.speedup,
                                  episode.masked)
            fields.update(gate=decision.expansion.name, gate_reason=decision.reason.name,
                          expanded=int(decision.expands), partial_group=int(coordinator.partial), turns=turns)
            if episode.masked:  # an environment failure: not a failure to train, not trained at all
                response_mask[:] = [0] * len(response_mask)
            limit = self.response_length
            return output_type(prompt_ids=prompt_ids, response_ids=response_ids[:limit],
                               response_mask=response_mask[:limit],
                               response_logprobs=logprobs[:limit] if with_logprobs else None,
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
    fields): solved fraction by turn (of the samples that were judged), masked samples (environment
    failures), expanded and split groups, mean speedup of the solved."""
    solved_all = np.asarray(non_tensor_batch["solved_turn"], dtype=np.int64)
    masked = np.asarray(non_tensor_batch["masked"], dtype=np.int64) > 0 if "masked" in non_tensor_batch else \
        np.zeros(len(solved_all), dtype=bool)
    solved = solved_all[~masked]
    turns = int(max_turns if max_turns is not None else max(int(solved_all.max(initial=0)), 1))
    metrics = {f"leap/solved@{t}": float(np.mean((solved > 0) & (solved <= t))) if len(solved) else 0.0
               for t in range(1, turns + 1)}
    metrics["leap/masked_samples"] = float(np.mean(masked)) if len(masked) else 0.0
    uids = np.asarray(non_tensor_batch["uid"]) if "uid" in non_tensor_batch else None
    expanded = np.asarray(non_tensor_batch["expanded"], dtype=np.int64)
    partial = np.asarray(non_tensor_batch["partial_group"], dtype=np.int64)
    if uids is not None:
        _, first = np.unique(uids, return_index=True)
        metrics["leap/expanded_groups"] = float(np.mean(expanded[first] > 0)) if len(first) else 0.0
    metrics["leap/expanded_samples"] = float(np.mean(expanded)) if len(expanded) else 0.0
    metrics["leap/split_samples"] = float(np.mean(partial)) if len(partial) else 0.0
    speedup = np.asarray(non_tensor_batch["speedup"], dtype=np.float64)[solved_all > 0]
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

