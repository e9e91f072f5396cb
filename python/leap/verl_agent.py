# SPDX-License-Identifier: Apache-2.0
"""LEAP's multi-turn episode as a verl agent loop: each sample's episode is leap.run_sample_episode
(turn 1, DCP's decision for the sample's uid group from a leap.GroupCoordinator, then the sandbox's
feedback and further turns for the expanded groups' unsolved samples, up to max_turns). Followed at
verl-project/verl 1dda039 (the v1 trainer, TaskRunnerV1, is verl's default there).

verl builds agent loops in its AgentLoopWorker processes from an agent loop config file
(``actor_rollout_ref.rollout.agent.agent_loop_config_path``), so name this class there:

    # leap_agent.yaml
    - name: leap_kernel
      _target_: leap.verl_agent.LeapKernelAgentLoop
      max_turns: 3
      sandbox: {devices: [0, 1, 2, 3]}       # where kernels run: GPU ids of the node, or
      # fleet: redis://10.0.0.5:6379          # a fleet (leap.fleet); the key from $LEAP_FLEET_KEY_FILE
      environment: leap.verl_agent:sandbox   # the default; any async (task, leap.Completion, leap.SampleKey) -> leap.Evaluation

and select it with ``actor_rollout_ref.rollout.agent.default_agent_loop=leap_kernel`` (or a dataset
column ``agent_name``). Importing this module with verl installed also registers the class under
``leap_kernel``; a verl that is installed but broken raises at import.

The task of a sample is read from its dataset row (leap.rows.task_of: ``extra_info["leap_task"]``,
``leap_task`` or ``reward_model["ground_truth"]``). The loop returns verl's AgentLoopOutput with the
reward set, so verl's reward loop is skipped for it: ``reward_score`` is ``turn_and_speedup_score(solved
turn, max_turns, speedup)``, which ``leap_rank`` ranks in LEAP's order at
``+algorithm.leap_score_tolerance=32`` (see leap.verl). ``extra_fields["reward_extra_info"]`` carries
score, verdict, speedup, solved_turn, masked, gate, gate_reason, expanded, partial_group and turns: verl
puts them in the batch (rollout dumps, validation metrics); ``step_metrics`` turns them into a training
step's metrics. Feedback tokens have response_mask 0; ``multi_modal_data`` is ``{}`` (a text prompt),
as verl's own loops return it.

Where kernels run. Agent-loop workers are Ray actors that hold no GPU: their ``CUDA_VISIBLE_DEVICES``
is empty (or, with some Ray versions, lists every GPU of the node, which vLLM and the training engine
hold). So the sandbox's address is set here, in the agent loop's entry: ``sandbox`` (SandboxPool's
settings: ``devices``, ``executable``, ``servers``, ...) or ``fleet`` (a Redis URL or FleetClient's
settings); see leap.process_sandbox. Without either, the pool follows the worker's environment.

The response budget. Every generation asks the server for at most what is left of
``rollout.response_length`` (``max_tokens``; verl's own default lets a later turn run past it, and the
response is then cut there). A feedback turn starts only when, after the feedback message, at least
``min_turn_tokens`` (default 1) are left; otherwise the episode ends. The outcome (solved turn, best
verdict, speedup) counts only turns whose tokens are all in the trained response.

Environment failures. An evaluation without a verdict (a dead-lettered or timed-out request, no GPU, a
harness fault) is evaluated again (``environment_retries``, default 1), then the sample is masked
(leap.episode): it reports no verdict to its group's gate, ends, and is returned with ``masked`` = 1, a
score of 0 and a response_mask of all 0, so verl's loss skips every token of it (policy loss, KL and
entropy are all taken under response_mask) and leap_rank / leap_grpo leave it out of its group.

Groups. DCP needs the turn-1 verdicts of a whole group. verl's v1 trainer runs the n sessions of a
prompt (``rollout.n``, or ``rollout.val_kwargs.n`` when validating) in one worker
(verl/trainer/ppo/v1/agent_loop_tq.py:107-129), each with its ``session_id``: the sessions of a uid in
this worker are the whole group, counted as they start (WorkerGroups), and meet at a GroupCoordinator of
that size. Its band is LEAP's (or ``t_min``/``t_max``, given for rollout.n and scaled to the group's
size); a group of one (validation's default ``val_kwargs.n = 1``) has no gate: each sample is evaluated
single-turn, and ``gate`` reads ``never_expand``. The legacy trainer (``trainer.use_v1=False``) repeats
the prompts and splits the repeated batch into ``agent.num_workers`` equal chunks, so a group stays whole
only when the batch size is a multiple of the worker count; a part of a split group is gated alone, at
once, with the band scaled to its size, logs ``partial_group = 1`` and a warning names the setting.
(gate_timeout, default 1800 s: a member that never reports stops holding its group after that long.)
"""
from __future__ import annotations

import importlib
import math
import os
import time
import warnings
from typing import Any, Callable, Mapping, Optional, cast
from uuid import uuid4

import numpy as np

from . import process_sandbox, rows
from ._multiturn import DEFAULT_FEEDBACK, OutOfRoom, band_for, trained_outcome
from .episode import Completion, Evaluation, GroupCoordinator, SampleKey, run_sample_episode
from .scores import score_fields
from .verl import registration_advice, verl_installed

_core: Any = importlib.import_module("._core", __package__)  # the compiled module, typed by its .pyi stubs where installed

__all__ = ["DEFAULT_FEEDBACK", "SKIP_REGISTRATION_CHECK", "RegistrationError", "WorkerGroups", "agent_loop_class", "band_for", "sandbox", "step_metrics", "worker_groups"]


class WorkerGroups:
    """The members of each uid group that run in this process, and the GroupCoordinators (leap.episode)
    that decide for them. join() is called at the start of an agent loop's run(), before its first
    await: verl's worker creates every session's task before any of them runs, so when a member finishes
    turn 1 every local member has joined and their count is final."""

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

    def coordinator(self, size: int, group_size: int, t_min: Optional[int], t_max: Optional[int],
                    timeout: Optional[float]) -> GroupCoordinator:
        """The coordinator of groups of `size` members here, configured for `group_size` (rollout.n): the band
        scaled to the size (band_for), or no gate for a group of one."""
        settings = (size, group_size, t_min, t_max, timeout)
        coordinator = self._coordinators.get(settings)
        if coordinator is None:
            gate = _core.NeverExpand() if size == 1 else band_for(size, group_size, t_min, t_max)
            coordinator = GroupCoordinator(size, gate, timeout=timeout)
            self._coordinators[settings] = coordinator
        return coordinator


class _LocalGroup:
    """What run_sample_episode asks of a coordinator (group_size, decide), for one member: the decision comes
    from this process's coordinator for the group as this worker holds it, chosen when the member reports.

    whole: the worker holds the whole group (verl's v1 trainer, or a legacy validation group of
    val_kwargs.n members); otherwise a count below rollout.n is a part of a split group."""

    def __init__(self, groups: WorkerGroups, group_size: int, validation_size: int, whole: bool,
                 t_min: Optional[int], t_max: Optional[int], timeout: Optional[float]) -> None:
        self.groups, self.group_size, self.validation_size, self.whole = groups, group_size, validation_size, whole
        self.t_min, self.t_max, self.timeout = t_min, t_max, timeout
        self.partial = False

    def join(self, group_id: Any) -> int:
        raise RuntimeError("the agent loop passes each member's index itself")

    async def decide(self, group_id: Any, sample: int, verdict: Any, *, task_id: int = 0) -> Any:
        size = self.groups.members(group_id)
        whole = self.whole or size >= self.group_size or (size == self.validation_size != self.group_size)
        self.partial = not whole
        if self.partial and sample + 1 == size:
            self.groups.split_groups_seen += 1
            warnings.warn(
                f"leap: a group of {self.group_size} samples has {size} in this agent-loop worker: DCP decided on "
                f"this part alone. verl's legacy trainer splits the repeated batch into equal chunks; keep groups "
                f"whole with data.train_batch_size a multiple of actor_rollout_ref.rollout.agent.num_workers, or use "
                f"the v1 trainer (trainer.use_v1=True), which runs a prompt's samples in one worker",
                RuntimeWarning, stacklevel=2)
        coordinator = self.groups.coordinator(size, self.group_size, self.t_min, self.t_max, self.timeout)
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
    """The default environment: this process's leap.environment.SandboxEnvironment (leap.process_sandbox)."""
    result: Evaluation = await process_sandbox.environment()(task, completion, key)
    return result


#: Set to 1 where leap.verl is imported in verl's task runner by means leap cannot see from a worker's
#: environment (a task runner of your own that imports it): the agent loop then skips its check.
SKIP_REGISTRATION_CHECK = "LEAP_VERL_SKIP_REGISTRATION_CHECK"


class RegistrationError(RuntimeError):
    """leap's estimator is configured, and nothing makes verl import leap.verl in its task runner."""


def _check_registration(config: Any) -> None:
    """Stops the run at the first agent loop leap builds (the first leap code a run executes, before any
    sample is generated) when leap's estimator is configured but nothing makes verl import leap.verl in
    its processes: the task runner computes the advantage, and verl itself would fail only at the first
    compute_advantage, after a whole rollout."""
    if os.environ.get(SKIP_REGISTRATION_CHECK, "").strip() not in ("", "0"):
        return
    algorithm = getattr(config, "algorithm", None)
    estimator = str(getattr(algorithm, "adv_estimator", "") or "")
    advice = registration_advice(estimator)
    if advice:
        raise RegistrationError(f"{advice} (set {SKIP_REGISTRATION_CHECK}=1 if your own task runner imports "
                                f"leap.verl)")


def _plain(value: Any) -> Any:
    """An omegaconf node (what hydra hands a config entry's values as) as plain containers."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        from omegaconf import OmegaConf
        if OmegaConf.is_config(value):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:
        pass
    return value


def agent_loop_class(base: type, output_type: type, register: Optional[Callable[[str], Callable[[type], type]]] = None,
                     name: str = "leap_kernel") -> type:
    """The agent loop as a subclass of verl's AgentLoopBase (`base`) returning `output_type`
    (AgentLoopOutput), registered under `name` with `register` when given."""

    class LeapKernelAgentLoop(base):  # type: ignore[misc]
        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any, *,
                     max_turns: int = 3, t_min: Optional[int] = None, t_max: Optional[int] = None,
                     environment: Any = "leap.verl_agent:sandbox", feedback_template: str = DEFAULT_FEEDBACK,
                     gate_timeout: Optional[float] = 1800.0, environment_retries: int = 1, min_turn_tokens: int = 1,
                     sandbox: Any = None, fleet: Any = None, **kwargs: Any) -> None:
            super().__init__(trainer_config, server_manager, tokenizer, processor, **kwargs)
            rollout = self.config.actor_rollout_ref.rollout
            self.response_length = int(rollout.response_length)
            self.group_size = int(rollout.n)
            val_kwargs = rollout.get("val_kwargs", None) if hasattr(rollout, "get") else None
            self.validation_size = int(val_kwargs.get("n", 1)) if val_kwargs is not None else 1
            self.max_turns = int(max_turns)
            if self.max_turns < 1:
                raise ValueError(f"max_turns ({max_turns}) must be >= 1")
            self.min_turn_tokens = int(min_turn_tokens)
            if self.min_turn_tokens < 1:
                raise ValueError(f"min_turn_tokens ({min_turn_tokens}) must be >= 1")
            self.t_min, self.t_max = t_min, t_max
            self.environment = _resolve(environment)
            self.feedback_template = feedback_template
            self.gate_timeout = gate_timeout
            self.environment_retries = int(environment_retries)
            if sandbox is not None or fleet is not None:
                process_sandbox.configure_from({**dict(_plain(sandbox) or {}), "fleet": _plain(fleet)})
            _check_registration(self.config)

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
            task = rows.task_of(kwargs)
            # v1 runs a prompt's sessions in one worker and numbers them (agent_loop_tq.py:115-127)
            whole = kwargs.get("session_id") is not None
            messages = list(kwargs["raw_prompt"])
            prompt_ids = list(await self.ct_build_initial_tokens(messages))
            # The runtime token stream (prompt, then response), the response's loss mask, and its log-probs:
            # a list while every turn came with log-probs, None after one that did not (never made-up zeros).
            state: dict[str, Any] = {"runtime": list(prompt_ids), "mask": [], "logprobs": []}
            turn_trained: list[bool] = []  # per generated turn: all its tokens lie within response_length
            request_id = uuid4().hex
            timing = {"generate_sequences": 0.0, "tool_calls": 0.0}

            async def policy(task: Any, so_far: Any, key: SampleKey) -> Completion:
                if so_far:  # the sandbox's feedback on the last turn, as a user message the loss skips
                    last = so_far[-1]
                    message = {"role": "user", "content": self.feedback_template.format(
                        verdict=last.verdict.name, feedback=last.feedback)}
                    merged, mask, logprobs = await self.ct_merge_non_assistant_msg(
                        list(messages), list(messages) + [message], state["runtime"], state["mask"], state["logprobs"])
                    if self.response_length - len(mask) < self.min_turn_tokens:
                        raise OutOfRoom(f"no room for turn {key.turn} within response_length "
                                         f"({self.response_length}): {len(mask)} response tokens so far")
                    messages.append(message)
                    state.update(runtime=list(merged.token_ids), mask=mask, logprobs=logprobs)
                room = self.response_length - len(state["mask"])
                started = time.perf_counter()
                output = await self.server_manager.generate(request_id=request_id, prompt_ids=list(state["runtime"]),
                                                            sampling_params={**sampling_params, "max_tokens": room})
                timing["generate_sequences"] += time.perf_counter() - started
                tokens = list(output.token_ids)
                generated = list(output.log_probs) if output.log_probs else None
                tracked = state["logprobs"] if generated is not None else None
                merged, mask, logprobs = await self.ct_merge_assistant_token(
                    state["runtime"], tokens, state["mask"], tracked,
                    assistant_logprobs=generated if tracked is not None else None)
                state.update(runtime=list(merged.token_ids), mask=mask, logprobs=logprobs)
                turn_trained.append(len(mask) <= self.response_length)
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                messages.append({"role": "assistant", "content": text})
                return Completion(text, len(tokens))

            async def environment(task: Any, completion: Completion, key: SampleKey) -> Evaluation:
                started = time.perf_counter()
                try:
                    result: Evaluation = await self.environment(task, completion, key)
                    return result
                finally:
                    timing["tool_calls"] += time.perf_counter() - started

            gate = _LocalGroup(worker_groups(), self.group_size, self.validation_size, whole, self.t_min, self.t_max,
                               self.gate_timeout)
            episode = await run_sample_episode(task, policy, environment, coordinator=cast(Any, gate),
                                               sample=member, group_id=uid, max_turns=self.max_turns,
                                               environment_retries=self.environment_retries)
            # The outcome counts the turns that are trained: generated, and all within response_length.
            outcome, trained = trained_outcome(episode.turns, turn_trained)
            masked = any(t.environment_failure for t in episode.turns[:trained])
            decision = episode.decision
            fields = score_fields(outcome.solved_turn, self.max_turns, outcome.best_verdict.name, outcome.speedup,
                                  masked)
            fields.update(gate=decision.expansion.name, gate_reason=decision.reason.name,
                          expanded=int(decision.expands), partial_group=int(gate.partial), turns=trained)
            mask = list(state["mask"])
            if masked:  # an environment failure: not a failure to train, not trained at all
                mask = [0] * len(mask)
            runtime = state["runtime"]
            response_ids = runtime[len(runtime) - len(mask):] if mask else []
            final_prompt = runtime[:len(runtime) - len(mask)]
            limit = self.response_length
            logprobs = state["logprobs"]
            return output_type(prompt_ids=final_prompt, response_ids=response_ids[:limit], response_mask=mask[:limit],
                               response_logprobs=logprobs[:limit] if logprobs else None,
                               multi_modal_data={}, reward_score=fields["score"], num_turns=2 * trained,
                               metrics={**timing, "num_preempted": -1}, extra_fields={"reward_extra_info": fields})

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

