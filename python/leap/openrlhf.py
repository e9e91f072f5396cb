# SPDX-License-Identifier: Apache-2.0
"""leap in OpenRLHF: the rank advantage through OpenRLHF's experience maker, in force inside the trainer
actor; LEAP's episode as an agent executor; the sandbox as a reward function. Followed at OpenRLHF/OpenRLHF
3c3be62; it imports neither verl nor leap.verl.

    python3 -m leap.openrlhf --leap.score_tolerance 32 \\
        --algo.advantage.estimator dr_grpo --rollout.n_samples_per_prompt 8 \\
        --train.agent_func_path leap_agent.py  ...  (the rest of OpenRLHF's train_ppo_ray arguments)

    # leap_agent.py
    import leap.openrlhf
    AgentExecutor = leap.openrlhf.agent_executor(max_turns=3, sandbox={"devices": [0, 1]})

The experience maker. OpenRLHF's estimators are a fixed if/elif in
``RemoteExperienceMaker.compute_advantages_and_returns`` (openrlhf/trainer/ppo_utils/experience_maker.py).
Its ``dr_grpo`` branch subtracts each prompt group's mean reward and then builds per-token returns with no
normalisation; the subclass puts leap's advantage into each sample's reward first, so that branch carries
it to the tokens unchanged (a rank advantage sums to 0 in its group: the mean it subtracts is 0 up to
float32 rounding, and it lies in [-1, 1], inside OpenRLHF's reward clip). The trainer is a Ray actor
(``PPOTrainer``, openrlhf/trainer/ppo_trainer.py) that builds its maker from its own module's global in its
own process, so a patch made in the driver does not reach it. ``python3 -m leap.openrlhf`` (``main``) is
OpenRLHF's train_ppo_ray with the patch in force in every Ray worker: it starts Ray with leap's
``worker_process_setup_hook`` (``setup_worker``), which makes ``openrlhf.trainer.ppo_trainer`` build
leap's maker as soon as a worker imports it, and the estimator and tolerance in the runtime env
(``--leap.estimator rank|grpo|dr_grpo``, ``--leap.score_tolerance``); it refuses an
``--algo.advantage.estimator`` other than ``dr_grpo`` before anything starts. OpenRLHF's length penalties
run after the subclass, on the advantage: leave them off.

The agent executor. ``agent_executor(...)`` makes OpenRLHF's ``AgentExecutor`` (``--train.agent_func_path``
loads a file that defines it): each sample's episode is leap.run_sample_episode. OpenRLHF's rollout actor
runs the n samples of a prompt together (``generate_responses``), and the executor joins them into one
group (a leap.GroupCoordinator of ``--rollout.n_samples_per_prompt`` members, which ``main`` passes on)
whose turn-1 verdicts DCP gates; the expanded group's unsolved samples get the sandbox's feedback and
another turn while ``max_length`` has room. The kernel is taken from the generated text only. The label
is the task (leap.rows.parse_task). An environment failure is evaluated again, then the sample is
masked (reward NaN); any other failure (a sandbox that cannot start, a bad label) propagates, so that the
run stops with its cause.

``reward_func`` (``--reward.remote_url`` with a file exposing it) is single-turn: OpenRLHF hands it the
prompt and the response decoded together, and it evaluates the response's part alone. OpenRLHF's
single-turn executor catches whatever a reward function raises and logs it at INFO level
(openrlhf/utils/agent.py:298-299), so the sample comes back without a reward: reward_func masks an
environment failure (reward NaN) and logs its cause, logs any other failure at ERROR before raising, and
the maker then refuses a sample without a reward naming where the cause is. Prefer the agent executor,
whose failures reach the driver.

Masked samples. A sample whose reward is NaN is no one's failure: the experience maker leaves it out of
its prompt group's rank, gives it advantage 0 and clears its ``action_mask``, so that OpenRLHF's losses
(each a mean under action_mask) skip it.
"""
from __future__ import annotations

import argparse
import asyncio
import copy
import importlib
import importlib.abc
import importlib.machinery
import itertools
import json
import logging
import math
import os
import runpy
import sys
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np

from . import _advantages as _untyped_advantages
from . import process_sandbox, rows
from ._multiturn import (DEFAULT_FEEDBACK, OutOfRoom, band_for, chat_suffix_ids, run_to_completion, token_ids,
                         trained_outcome)
from .episode import Completion, Evaluation, GroupCoordinator, SampleKey, run_sample_episode, sample_key
from .scores import turn_and_speedup_score

_advantages: Any = _untyped_advantages
_log = logging.getLogger(__name__)

__all__ = ["agent_executor", "leap_experience_maker", "main", "patch_openrlhf", "reward_func", "runtime_env",
           "setup_worker"]

TRAINER_MODULE = "openrlhf.trainer.ppo_trainer"
ENV_ESTIMATOR = "LEAP_OPENRLHF_ESTIMATOR"
ENV_TOLERANCE = "LEAP_OPENRLHF_SCORE_TOLERANCE"
ENV_GROUP_SIZE = "LEAP_OPENRLHF_GROUP_SIZE"
_SWALLOWED = ("OpenRLHF's single-turn executor catches a reward function's exception and logs it at INFO level "
              "('[SingleTurnExecutor] Failed to fetch reward', openrlhf/utils/agent.py:298-299)")


def leap_experience_maker(base: type, estimator: str = "rank", score_tolerance: float = 0.0) -> type:
    """A subclass of OpenRLHF's RemoteExperienceMaker (`base`) whose compute_advantages_and_returns
    replaces each sample's reward by leap's advantage within its prompt group (estimator "rank",
    "grpo" or "dr_grpo"; a NaN reward is masked: left out, advantage 0, action_mask cleared), then runs
    OpenRLHF's dr_grpo branch."""

    class LeapExperienceMaker(base):  # type: ignore[misc]
        leap_estimator = estimator
        leap_score_tolerance = float(score_tolerance)

        def compute_advantages_and_returns(self, experiences: list[Any]) -> Any:
            import torch

            args = self.strategy.args
            if args.algo.advantage.estimator != "dr_grpo":
                raise ValueError(f"leap.openrlhf: run OpenRLHF with --algo.advantage.estimator dr_grpo (got "
                                 f"{args.algo.advantage.estimator!r}); its branch carries leap's advantage to the tokens")
            missing = sum(len(experience.index) for experience in experiences if experience.rewards is None)
            if missing:
                raise RuntimeError(f"leap.openrlhf: {missing} samples came back without a reward: {_SWALLOWED}. The "
                                   f"rollout workers' log holds leap.openrlhf's ERROR line with the cause; "
                                   f"leap.openrlhf.agent_executor() lets such a failure stop the run with it")
            n = int(args.rollout.n_samples_per_prompt)
            positions = [list(experience.index) for experience in experiences]
            order = np.fromiter(itertools.chain.from_iterable(positions), dtype=np.int64)
            raw = torch.cat([experience.rewards for experience in experiences]).detach().to("cpu", torch.float64)
            if len(order) % n:
                raise ValueError(f"{len(order)} samples do not split into prompt groups of {n}")
            rewards = np.empty(len(order))
            rewards[order] = raw.numpy()  # OpenRLHF's prompt order: a group is n consecutive samples
            groups = np.arange(len(order), dtype=np.uint32) // np.uint32(n)
            judged = ~np.isnan(rewards)  # NaN: masked (see the module's documentation)
            kept, kept_groups = np.ascontiguousarray(rewards[judged]), np.ascontiguousarray(groups[judged])
            advantages = np.zeros(len(rewards))
            if self.leap_estimator == "rank":
                advantages[judged] = _advantages.rank_advantages_of_scores(kept, kept_groups, self.leap_score_tolerance)
            elif self.leap_estimator in ("grpo", "dr_grpo"):
                advantages[judged] = _advantages.grpo_advantages(kept, kept_groups,
                                                                 scale_by_std=self.leap_estimator == "grpo")
            else:
                raise ValueError(f"estimator {self.leap_estimator!r}: expected 'rank', 'grpo' or 'dr_grpo'")
            start = 0
            for experience, members in zip(experiences, positions):
                mine = order[start:start + len(members)]
                values = torch.from_numpy(advantages[mine])
                experience.rewards = values.to(device=experience.rewards.device, dtype=experience.rewards.dtype)
                masked = torch.from_numpy(~judged[mine]).to(experience.action_mask.device)
                if bool(masked.any()):
                    experience.action_mask = experience.action_mask.clone()
                    experience.action_mask[masked] = 0
                start += len(members)
            return super().compute_advantages_and_returns(experiences)

    LeapExperienceMaker.__module__ = __name__
    LeapExperienceMaker.__qualname__ = "LeapExperienceMaker"
    return LeapExperienceMaker


def _patch_module(trainer_module: Any, estimator: str, score_tolerance: float) -> type:
    original = trainer_module.RemoteExperienceMaker
    base = getattr(original, "_leap_base", original)
    maker = leap_experience_maker(base, estimator, score_tolerance)
    maker._leap_base = base  # type: ignore[attr-defined]
    trainer_module.RemoteExperienceMaker = maker
    return maker


def patch_openrlhf(estimator: str = "rank", score_tolerance: float = 0.0) -> type:
    """Makes OpenRLHF's trainer module in THIS process build LeapExperienceMaker (the name BasePPOTrainer
    instantiates). The trainer is a Ray actor with a process of its own: run OpenRLHF through main()
    (``python3 -m leap.openrlhf``), which does this in every Ray worker. Returns the class."""
    return _patch_module(importlib.import_module(TRAINER_MODULE), estimator, score_tolerance)


class _PatchingLoader(importlib.abc.Loader):
    """Loads openrlhf.trainer.ppo_trainer as its own loader does, then patches it."""

    def __init__(self, loader: Any, estimator: str, score_tolerance: float) -> None:
        self.loader, self.estimator, self.score_tolerance = loader, estimator, score_tolerance

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        _patch_module(module, self.estimator, self.score_tolerance)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches openrlhf.trainer.ppo_trainer when it is first imported (a Ray worker imports it as it makes
    the PPOTrainer actor; workers that never do, vLLM's, are left alone)."""

    def __init__(self, estimator: str, score_tolerance: float) -> None:
        self.estimator, self.score_tolerance = estimator, score_tolerance

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != TRAINER_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, self.estimator, self.score_tolerance)
        return spec


def _settings_from_environment() -> tuple[str, float]:
    estimator = os.environ.get(ENV_ESTIMATOR, "rank")
    if estimator not in ("rank", "grpo", "dr_grpo"):
        raise ValueError(f"${ENV_ESTIMATOR} ({estimator!r}): expected 'rank', 'grpo' or 'dr_grpo'")
    return estimator, float(os.environ.get(ENV_TOLERANCE, "0"))


def setup_worker() -> None:
    """Ray's ``worker_process_setup_hook`` (set by main and runtime_env): in this process, OpenRLHF's trainer
    module builds leap's maker with the estimator and tolerance the runtime env carries."""
    estimator, tolerance = _settings_from_environment()
    module = sys.modules.get(TRAINER_MODULE)
    if module is not None:
        _patch_module(module, estimator, tolerance)
        return
    for finder in sys.meta_path:
        if isinstance(finder, _PatchOnImport):
            finder.estimator, finder.score_tolerance = estimator, tolerance
            return
    sys.meta_path.insert(0, _PatchOnImport(estimator, tolerance))


# OpenRLHF's train() starts Ray with these when it starts it itself (openrlhf/cli/train_ppo_ray.py:24-32).
_OPENRLHF_ENV_DEFAULTS = {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN", "RAY_ENABLE_ZERO_COPY_TORCH_TENSORS": "1"}


def runtime_env(estimator: str = "rank", score_tolerance: float = 0.0, group_size: Optional[int] = None) -> dict[str, Any]:
    """The Ray runtime env that puts leap's maker in force in every worker: pass it to ray.init before
    OpenRLHF's train() (which then leaves Ray as it is). main() does this for you."""
    env_vars = {name: os.environ.get(name, default) for name, default in _OPENRLHF_ENV_DEFAULTS.items()}
    env_vars.update({ENV_ESTIMATOR: estimator, ENV_TOLERANCE: repr(float(score_tolerance))})
    if group_size is not None:
        env_vars[ENV_GROUP_SIZE] = str(int(group_size))
    # by name: main() runs as __main__ under `python3 -m leap.openrlhf`, and workers import leap.openrlhf
    return {"env_vars": env_vars, "worker_process_setup_hook": "leap.openrlhf.setup_worker"}


def _option(argv: Sequence[str], name: str) -> Optional[str]:
    for i, argument in enumerate(argv):
        if argument == name and i + 1 < len(argv):
            return argv[i + 1]
        if argument.startswith(name + "="):
            return argument.split("=", 1)[1]
    return None


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``python3 -m leap.openrlhf [--leap.estimator E] [--leap.score_tolerance T] <train_ppo_ray arguments>``:
    OpenRLHF's train_ppo_ray with leap's experience maker in force in the trainer actor (see the module's
    documentation). Refuses, before anything starts, an --algo.advantage.estimator other than dr_grpo."""
    parser = argparse.ArgumentParser(prog="python3 -m leap.openrlhf", add_help=False)
    parser.add_argument("--leap.estimator", dest="estimator", default="rank", choices=("rank", "grpo", "dr_grpo"))
    parser.add_argument("--leap.score_tolerance", dest="score_tolerance", type=float, default=0.0)
    ours, rest = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    estimator = _option(rest, "--algo.advantage.estimator")
    if estimator != "dr_grpo":
        raise SystemExit(f"leap.openrlhf: pass --algo.advantage.estimator dr_grpo (got {estimator!r}): its branch "
                         f"carries leap's advantage to the tokens")
    group_size = int(_option(rest, "--rollout.n_samples_per_prompt") or 1)
    environment = runtime_env(ours.estimator, ours.score_tolerance, group_size)
    os.environ.update(environment["env_vars"])
    ray: Any = importlib.import_module("ray")
    if not ray.is_initialized():
        ray.init(runtime_env=environment)
    setup_worker()  # this process too (a local-mode actor runs here)
    sys.argv = ["openrlhf.cli.train_ppo_ray", *rest]
    runpy.run_module("openrlhf.cli.train_ppo_ray", run_name="__main__", alter_sys=True)


# ---- the sandbox as OpenRLHF's reward function -----------------------------------------------------------

def _response_of(query: str, prompt: str) -> Optional[str]:
    """The response's part of OpenRLHF's query (the prompt's tokens and the response's, decoded together:
    openrlhf/utils/agent.py:283): after the prompt, or after the prompt's last characters where decoding
    changed the prompt's text; None when the prompt is not found."""
    if query.startswith(prompt):
        return query[len(prompt):]
    tail = prompt[-256:].strip()
    at = query.find(tail) if tail else -1
    return query[at + len(tail):] if at >= 0 else None


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], max_turns: int = 1,
                sandbox: Optional[str] = None, environment_retries: int = 1, **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's reward function (called in a thread, one sample at a time): evaluates the kernel of each
    query's response part (the last fenced block after the prompt: an example kernel in the prompt is never
    the answer) against its label's task (leap.rows.parse_task: a built-in name, or a spec as JSON text) on
    this process's sandbox (leap.process_sandbox; `sandbox` names the leap-sandbox program). "rewards":
    turn_and_speedup_score of solved turn 1 or 0; "scores" (OpenRLHF's dynamic filtering, in [0, 1]): 1
    solved, 0 not; "extra_logs": verdict index (0 compile_error .. 4 correct), speedup, solved, masked. An
    evaluation without a verdict is made again up to environment_retries times; when none gets one the
    sample is masked (reward and score NaN) and the cause logged at WARNING. Any other failure is logged at
    ERROR, with its cause, and raised (see the module's documentation on what OpenRLHF does with it)."""
    import torch

    try:
        environment = process_sandbox.environment(sandbox)
        tasks = [rows.parse_task(label) for label in labels]
        responses = [_response_of(query, prompt) for query, prompt in zip(queries, prompts)]
    except Exception:
        _log.exception("leap.openrlhf.reward_func could not evaluate this batch")
        raise

    async def evaluate(i: int, response: Optional[str], task: Any) -> Optional[Evaluation]:
        if response is None:
            _log.warning("leap.openrlhf.reward_func: the prompt is not in sample %d's query; the sample is masked", i)
            return None
        for attempt in range(environment_retries + 1):
            try:
                result: Evaluation = await environment(task, Completion(response), sample_key(0, i, 1)._replace(
                    attempt=attempt))
                return result
            except Exception as error:  # an environment failure: evaluated again, then masked
                if attempt == environment_retries:
                    _log.warning("leap.openrlhf.reward_func: no verdict for sample %d after %d attempts (%s: %s); "
                                 "the sample is masked", i, attempt + 1, type(error).__name__, error)
        return None

    async def evaluate_all() -> list[Optional[Evaluation]]:
        return list(await asyncio.gather(*[evaluate(i, response, task)
                                           for i, (response, task) in enumerate(zip(responses, tasks))]))

    evaluations = run_to_completion(evaluate_all())
    names = ("compile_error", "runtime_error", "timeout", "wrong_answer", "correct")
    solved = [1 if e is not None and e.verdict.name == "correct" else 0 for e in evaluations]
    scores = [math.nan if e is None else turn_and_speedup_score(s, max_turns, e.speedup)
              for s, e in zip(solved, evaluations)]
    return {"rewards": torch.tensor(scores, dtype=torch.float32),
            "scores": torch.tensor([math.nan if e is None else float(s) for s, e in zip(solved, evaluations)]),
            "extra_logs": {"leap_verdict": torch.tensor([math.nan if e is None else float(names.index(e.verdict.name))
                                                         for e in evaluations]),
                           "leap_speedup": torch.tensor([math.nan if e is None else e.speedup for e in evaluations]),
                           "leap_solved": torch.tensor([float(s) for s in solved]),
                           "leap_masked": torch.tensor([float(e is None) for e in evaluations])}}


# ---- LEAP's episode as OpenRLHF's agent executor ---------------------------------------------------------

def _prompt_ids(tokenizer: Any, text: str) -> list[int]:
    """The prompt's token ids as OpenRLHF's executors take them (openrlhf/utils/agent.py:56-58)."""
    encoded = tokenizer(text=text, add_special_tokens=False)
    return token_ids(encoded, "the tokenizer")


def _feedback_ids(tokenizer: Any, text: str) -> list[int]:
    """A user turn with the feedback, as the chat template renders it after an assistant turn; the text alone
    where the tokenizer has no chat template."""
    message = [{"role": "user", "content": text}]
    try:
        return chat_suffix_ids(tokenizer, message, eos_token_id=getattr(tokenizer, "eos_token_id", None))
    except (AttributeError, ValueError, TypeError):
        return token_ids(tokenizer(text=text, add_special_tokens=False), "the tokenizer")


def _executor_base() -> type:
    try:
        module = importlib.import_module("openrlhf.utils.agent")
    except ImportError:
        return object
    return cast(type, module.AgentExecutorBase)


def agent_executor(*, max_turns: int = 3, group_size: Optional[int] = None, t_min: Optional[int] = None,
                   t_max: Optional[int] = None, environment: Optional[Callable[..., Any]] = None,
                   sandbox: Optional[dict[str, Any]] = None, feedback_template: str = DEFAULT_FEEDBACK,
                   environment_retries: int = 1, min_turn_tokens: int = 1,
                   gate_timeout: Optional[float] = 1800.0) -> type:
    """OpenRLHF's AgentExecutor running LEAP's episode per sample (see the module's documentation).
    group_size: the members of a prompt's group, --rollout.n_samples_per_prompt (default: what main() passed
    on in $LEAP_OPENRLHF_GROUP_SIZE). environment: an episode environment; default this process's sandbox,
    at `sandbox`'s address (leap.process_sandbox: devices, executable or fleet). The class derives from
    OpenRLHF's AgentExecutorBase where OpenRLHF can be imported."""
    if max_turns < 1 or min_turn_tokens < 1:
        raise ValueError(f"max_turns ({max_turns}) and min_turn_tokens ({min_turn_tokens}) must be >= 1")

    class AgentExecutor(_executor_base()):  # type: ignore[misc]
        """LEAP's episode for each sample of a prompt's group (leap.openrlhf.agent_executor)."""

        def __init__(self) -> None:
            self._coordinators: dict[int, GroupCoordinator] = {}
            self._serial: dict[Any, int] = {}
            if sandbox is not None:
                process_sandbox.configure_from(sandbox)

        def _join(self, key: Any, size: int) -> tuple[GroupCoordinator, int, Any]:
            """This sample's group and index: the samples of one prompt are run together
            (RolloutRayActor.generate_responses gathers them), so they fill one group; a prompt given again
            fills the next."""
            coordinator = self._coordinators.get(size)
            if coordinator is None:
                coordinator = GroupCoordinator(size, band_for(size, size, t_min, t_max), timeout=gate_timeout)
                self._coordinators[size] = coordinator
            serial = self._serial.get(key, 0)
            while True:
                try:
                    return coordinator, coordinator.join((key, serial)), (key, serial)
                except ValueError:  # that group has its members: the next one
                    serial += 1
                    self._serial[key] = serial

        async def execute(self, prompt: Any, label: Any, sampling_params: Any, max_length: int, hf_tokenizer: Any,
                          llm_engine: Any, images: Any = None) -> dict[str, Any]:
            size = int(group_size or os.environ.get(ENV_GROUP_SIZE, "0") or 0)
            if size < 1:
                raise ValueError("leap.openrlhf.agent_executor: the group size is unknown: pass group_size= "
                                 "(--rollout.n_samples_per_prompt), or run OpenRLHF through python3 -m leap.openrlhf")
            coordinator, sample, group_id = self._join((prompt, json.dumps(label, sort_keys=True, default=str)), size)
            task = rows.parse_task(label)
            evaluate = environment or process_sandbox.environment()
            observation = _prompt_ids(hf_tokenizer, prompt)
            action_ranges: list[tuple[int, int]] = []
            logprobs: Optional[list[float]] = [0.0] * len(observation) if sampling_params.logprobs is not None else None
            kept: list[bool] = []

            async def policy(task: Any, so_far: Any, key: SampleKey) -> Completion:
                nonlocal logprobs
                if so_far:  # the sandbox's feedback, outside every action range (no loss on it)
                    last = so_far[-1]
                    ids = _feedback_ids(hf_tokenizer, feedback_template.format(verdict=last.verdict.name,
                                                                               feedback=last.feedback))
                    if max_length - len(observation) - len(ids) < min_turn_tokens:
                        raise OutOfRoom(f"no room for turn {key.turn} within max_length ({max_length})")
                    observation.extend(ids)
                    if logprobs is not None:
                        logprobs.extend([0.0] * len(ids))
                params = copy.deepcopy(sampling_params)
                params.max_tokens = max_length - len(observation)  # as OpenRLHF's MultiTurnAgentExecutor (agent.py:92)
                output = (await llm_engine.generate(list(observation), params)).outputs[0]
                ids = list(output.token_ids)
                start = len(observation)
                observation.extend(ids)
                action_ranges.append((start, len(observation)))
                if logprobs is not None:
                    if output.logprobs is None:
                        logprobs = None
                    else:
                        logprobs.extend(float(entry[token].logprob) for token, entry in zip(ids, output.logprobs))
                kept.append(len(observation) <= max_length)
                return Completion(output.text, len(ids))

            episode = await run_sample_episode(task, policy, evaluate, coordinator=coordinator, sample=sample,
                                               group_id=group_id, max_turns=max_turns,
                                               environment_retries=environment_retries)
            outcome, trained = trained_outcome(episode.turns, kept)
            masked = any(turn.environment_failure for turn in episode.turns[:trained])
            if masked:
                failure = next(t for t in episode.turns if t.environment_failure)
                _log.warning("leap.openrlhf: sample masked: %s", failure.feedback)
            reward = math.nan if masked else turn_and_speedup_score(outcome.solved_turn, max_turns, outcome.speedup)
            return {"prompt": prompt, "label": label, "images": images, "mm_train_inputs": None,
                    "reward": reward, "scores": math.nan if masked else float(outcome.solved_turn > 0),
                    "observation_tokens": observation, "action_ranges": action_ranges[:trained],
                    "rollout_log_probs": logprobs, "truncated": False,
                    "extra_logs": {"leap_solved_turn": float(outcome.solved_turn), "leap_masked": float(masked),
                                   "leap_expanded": float(episode.decision.expands), "leap_turns": float(trained)}}

    AgentExecutor.__module__ = __name__
    AgentExecutor.__qualname__ = "AgentExecutor"
    return AgentExecutor


if __name__ == "__main__":
    main()
