# SPDX-License-Identifier: Apache-2.0
"""leap in TRL's GRPOTrainer: leap's advantages in place of TRL's, and LEAP's multi-turn episode as
TRL's ``rollout_func``.

TRL computes advantages inline in ``GRPOTrainer._generate_and_score_completions`` (no hook), from the
rewards that ``_calculate_rewards`` returns gathered across processes; a process's rows are then the
slice [process_index * local, (process_index + 1) * local) of the gathered batch, and a group is
``num_generations`` consecutive rows of it, so a group can straddle processes. The subclass does the
same: it keeps the gathered rewards, computes leap's advantages over the whole batch, and replaces
the returned ``advantages`` with its process's slice.

    from trl import GRPOTrainer
    from leap.trl import leap_grpo_trainer, make_rollout_func, leap_reward

    LeapGRPOTrainer = leap_grpo_trainer(GRPOTrainer)
    trainer = LeapGRPOTrainer(model=..., reward_funcs=[leap_reward(max_turns=3)], args=...,
                              rollout_func=make_rollout_func(generate, environment, task_of, max_turns=3),
                              leap_score_tolerance=leap.verl.TURNS_ONLY_TOLERANCE)

``leap_estimator="rank"`` (default): the rank of the weighted reward sum within each group, ties
within ``leap_score_tolerance``; ``"grpo"``/``"dr_grpo"``: leap's GRPO / Dr.GRPO. A row every
reward function left unscored (all None, NaN in TRL) is left out of its group and gets 0, as TRL does.
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _advantages as _untyped_advantages

from .episode import Completion, Evaluation, sample_key
from .verl import turn_and_speedup_score
from .verl_agent import DEFAULT_FEEDBACK, band_for

_advantages: Any = _untyped_advantages
_core: Any = importlib.import_module("._core", __package__)

__all__ = ["Generation", "leap_advantages", "leap_grpo_trainer", "leap_reward", "make_rollout_func"]


def leap_advantages(rewards: Any, group_size: int, estimator: str = "rank", tolerance: float = 0.0,
                    epsilon: float = 1e-6) -> "np.ndarray[Any, Any]":
    """leap's advantages over TRL's gathered rewards (one per row; NaN = unscorable), groups of
    `group_size` consecutive rows. Unscorable rows get 0 and are left out of their group."""
    values = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if group_size < 1 or len(values) % group_size:
        raise ValueError(f"{len(values)} rewards do not split into groups of {group_size}")
    ids = np.arange(len(values), dtype=np.uint32) // np.uint32(group_size)
    scorable = ~np.isnan(values)
    out = np.zeros(len(values))
    if not scorable.any():
        return out
    kept, kept_ids = np.ascontiguousarray(values[scorable]), np.ascontiguousarray(ids[scorable])
    if estimator == "rank":
        out[scorable] = _advantages.rank_advantages_of_scores(kept, kept_ids, tolerance)
    elif estimator in ("grpo", "dr_grpo"):
        out[scorable] = _advantages.grpo_advantages(kept, kept_ids, epsilon=epsilon, scale_by_std=estimator == "grpo")
    else:
        raise ValueError(f"leap_estimator {estimator!r}: expected 'rank', 'grpo' or 'dr_grpo'")
    return out


def leap_grpo_trainer(base: type) -> type:
    """A subclass of TRL's GRPOTrainer (`base`) whose advantages are leap's. Extra keyword arguments:
    leap_estimator ("rank", "grpo", "dr_grpo") and leap_score_tolerance (rank ties)."""

    class LeapGRPOTrainer(base):  # type: ignore[misc]
        def __init__(self, *args: Any, leap_estimator: str = "rank", leap_score_tolerance: float = 0.0,
                     **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.leap_estimator = leap_estimator
            self.leap_score_tolerance = float(leap_score_tolerance)
            self._leap_gathered: Any = None

        def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> Any:
            gathered = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self._leap_gathered = gathered  # every process's rows, as TRL gathers them
            return gathered

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            import torch

            output = super()._generate_and_score_completions(inputs)
            per_func, self._leap_gathered = self._leap_gathered, None
            if per_func is None:
                raise RuntimeError("leap: GRPOTrainer._generate_and_score_completions did not call "
                                   "_calculate_rewards; this TRL is not the one leap.trl follows")
            weights = self.reward_weights.to(per_func.device).unsqueeze(0)
            rewards = (per_func * weights).nansum(dim=1)
            rewards[torch.isnan(per_func).all(dim=1)] = torch.nan
            training = self.model.training if getattr(self, "model", None) is not None else True
            group_size = self.num_generations if training else self.num_generations_eval
            advantages = leap_advantages(rewards.detach().cpu().double().numpy(), group_size, self.leap_estimator,
                                         self.leap_score_tolerance)
            local = len(inputs)
            start = self.accelerator.process_index * local
            local_advantages = torch.from_numpy(advantages[start:start + local])
            output["advantages"] = local_advantages.to(device=output["advantages"].device,
                                                       dtype=output["advantages"].dtype)
            return output

    LeapGRPOTrainer.__module__ = __name__
    LeapGRPOTrainer.__qualname__ = "LeapGRPOTrainer"
    return LeapGRPOTrainer


def leap_reward(max_turns: int) -> Callable[..., list[Optional[float]]]:
    """A TRL reward function over make_rollout_func's extra fields: turn_and_speedup_score(solved_turn,
    max_turns, speedup). Rank it with leap_score_tolerance = leap.verl.TURNS_ONLY_TOLERANCE for LEAP's
    published order."""

    def leap_score(*, solved_turn: Sequence[int], speedup: Sequence[float], **kwargs: Any) -> list[Optional[float]]:
        return [turn_and_speedup_score(int(t), max_turns, None if math.isnan(float(s)) else float(s))
                for t, s in zip(solved_turn, speedup)]

    return leap_score


@dataclass
class Generation:
    """One turn's completion for one row: its token ids and log-probabilities (or None), and text."""
    completion_ids: list[int]
    logprobs: Optional[list[float]]
    text: str


def _gather_object(values: list[Any]) -> list[Any]:
    utils: Any = importlib.import_module("accelerate.utils")  # TRL's own dependency
    return list(utils.gather_object(values))


def make_rollout_func(generate: Callable[[list[list[int]], Any], Any], environment: Callable[..., Any],
                      task_of: Callable[[Any], Any], *, max_turns: int = 3, t_min: Optional[int] = None,
                      t_max: Optional[int] = None, encode_prompt: Optional[Callable[[Any, Any], list[int]]] = None,
                      encode_feedback: Optional[Callable[[str, Any], list[int]]] = None,
                      feedback_template: str = DEFAULT_FEEDBACK, max_feedback_chars: int = 2000
                      ) -> Callable[[list[Any], Any], dict[str, Any]]:
    """TRL's rollout_func(prompts, trainer) running LEAP's episode for this process's rows:

    generate(contexts, trainer)   -> one Generation per context (token ids of the conversation so far;
                                     sync or async; e.g. a vLLM client call)
    environment(task, completion, key) -> leap.Evaluation: an episode environment (leap.episode), e.g.
                                     leap.verl.sandbox_environment(); key is leap.sample_key of the
                                     row's group, member and turn over the whole batch
    task_of(prompt)               -> the row's task (TRL hands rollout_func only the prompts)

    Turn 1 for every row; the turn-1 verdicts are gathered from every process (a group of
    trainer.num_generations consecutive rows may straddle processes, as TRL's rewards do) and the
    gate decides each group once; rows of expanded groups that failed get the feedback and another
    turn, up to max_turns. Returns prompt_ids, completion_ids (the turns and the feedback between
    them), logprobs, env_mask (0 on feedback tokens) and, for reward functions and logs, solved_turn,
    speedup, verdict, gate and turns per row."""

    def run(value: Any) -> Any:
        if not inspect.isawaitable(value):
            return value

        async def wait() -> Any:
            return await value

        return asyncio.run(wait())

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        encode = encode_prompt or (lambda p, t: list(tokenizer.apply_chat_template(
            p, add_generation_prompt=True, tokenize=True)) if isinstance(p, list) else list(tokenizer.encode(p)))
        feedback_ids = encode_feedback or (lambda text, t: list(tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True)))
        rows = len(prompts)
        group_size = _group_size(trainer)
        tasks = [task_of(p) for p in prompts]
        prompt_ids = [encode(p, trainer) for p in prompts]
        completion: list[list[int]] = [[] for _ in range(rows)]
        logprobs: list[list[float]] = [[] for _ in range(rows)]
        mask: list[list[int]] = [[] for _ in range(rows)]
        solved = [0] * rows
        speedup = [math.nan] * rows
        best = ["compile_error"] * rows
        turns = [0] * rows
        order = ("compile_error", "runtime_error", "timeout", "wrong_answer", "correct")
        active = list(range(rows))
        gate = ["prune_easy"] * rows
        for turn in range(1, max_turns + 1):
            if not active:
                break
            generations = run(generate([prompt_ids[r] + completion[r] for r in active], trainer))
            evaluations: list[Evaluation] = []
            for r, generation in zip(active, generations):
                completion[r] += list(generation.completion_ids)
                logprobs[r] += list(generation.logprobs) if generation.logprobs else [0.0] * len(generation.completion_ids)
                mask[r] += [1] * len(generation.completion_ids)
                turns[r] = turn
            first_row = trainer.accelerator.process_index * rows
            keys = [sample_key((first_row + r) // group_size, (first_row + r) % group_size, turn) for r in active]
            evaluations = run(_evaluate_all(environment, [tasks[r] for r in active],
                                            [Completion(g.text, len(g.completion_ids)) for g in generations], keys))
            verdicts = [e.verdict.name for e in evaluations]
            for r, evaluation, verdict in zip(active, evaluations, verdicts):
                if order.index(verdict) > order.index(best[r]):
                    best[r] = verdict
                if verdict == "correct":
                    solved[r], speedup[r] = turn, evaluation.speedup
            if turn == 1:
                gate = _decide(trainer, verdicts, t_min, t_max)
            still = [r for r, v in zip(active, verdicts) if v != "correct" and gate[r] == "expand"]
            if turn < max_turns:
                for r, evaluation, verdict in zip(active, evaluations, verdicts):
                    if r in still:
                        message = feedback_template.format(verdict=verdict,
                                                           feedback=evaluation.feedback[:max_feedback_chars])
                        ids = feedback_ids(message, trainer)
                        completion[r] += ids
                        logprobs[r] += [0.0] * len(ids)
                        mask[r] += [0] * len(ids)
            active = still
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": logprobs, "env_mask": mask,
                "solved_turn": solved, "speedup": speedup, "verdict": best, "gate": gate, "turns": turns}

    return rollout_func


async def _evaluate_all(environment: Callable[..., Any], tasks: list[Any], completions: list[Completion],
                        keys: list[Any]) -> list[Evaluation]:
    """The environment on each row's completion; one that raises gives that row a runtime_error turn
    carrying the message, as leap.run_episodes records it."""

    async def one(task: Any, completion: Completion, key: Any) -> Evaluation:
        try:
            value = environment(task, completion, key)
            result = await value if inspect.isawaitable(value) else value
        except Exception as error:  # noqa: BLE001 - a failed evaluation is a failed turn
            return Evaluation(_core.Verdict.runtime_error, math.nan, f"the environment failed: {error}")
        if not isinstance(result, Evaluation):
            raise TypeError(f"the environment returned {type(result).__name__}, not a leap.Evaluation")
        return result

    return list(await asyncio.gather(*[one(t, c, k) for t, c, k in zip(tasks, completions, keys)]))


def _group_size(trainer: Any) -> int:
    training = trainer.model.training if getattr(trainer, "model", None) is not None else True
    return int(trainer.num_generations if training else trainer.num_generations_eval)


def _decide(trainer: Any, local_verdicts: list[str], t_min: Optional[int], t_max: Optional[int]) -> list[str]:
    """Each local row's gate decision, with the groups formed over every process's rows (gathered in
    process order, as TRL gathers rewards) and the local slice taken back."""
    everyone = _gather_object(list(local_verdicts))
    group_size = _group_size(trainer)
    if len(everyone) % group_size:
        raise ValueError(f"{len(everyone)} rows over all processes do not split into groups of {group_size}")
    decisions: list[str] = []
    for start in range(0, len(everyone), group_size):
        verdicts = everyone[start:start + group_size]
        stats = _core.group_stats([_core.Verdict.__members__[v] for v in verdicts])
        expansion, _ = band_for(group_size, group_size, t_min, t_max).assess(stats)
        decisions += [expansion.name] * group_size
    first = trainer.accelerator.process_index * len(local_verdicts)
    return decisions[first:first + len(local_verdicts)]
