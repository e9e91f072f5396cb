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
                              rollout_func=make_rollout_func(generate, leap.verl.sandbox_environment(), task_of,
                                                             max_turns=3),
                              leap_score_tolerance=leap.verl.TURNS_ONLY_TOLERANCE)

``leap_estimator="rank"`` (default): the rank of the weighted reward sum within each group, ties
within ``leap_score_tolerance``; ``"grpo"``/``"dr_grpo"``: leap's GRPO / Dr.GRPO. A row every
reward function left unscored (all None, NaN in TRL) is left out of its group and gets 0, as TRL does.
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np

from . import _advantages as _untyped_advantages

from .episode import Completion, SampleKey, run_sample_episode
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
        return [turn_and_speedup_score(int(t), max_turns, float(s))
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


def make_rollout_func(generate: Callable[[list[int], Any], Any], environment: Callable[..., Any],
                      task_of: Callable[[Any], Any], *, max_turns: int = 3, t_min: Optional[int] = None,
                      t_max: Optional[int] = None, encode_prompt: Optional[Callable[[Any, Any], list[int]]] = None,
                      encode_feedback: Optional[Callable[[str, Any], list[int]]] = None,
                      feedback_template: str = DEFAULT_FEEDBACK) -> Callable[[list[Any], Any], dict[str, Any]]:
    """TRL's rollout_func(prompts, trainer) running LEAP's episode for each of this process's rows with
    leap.run_sample_episode:

    generate(context, trainer)         -> a Generation for the conversation so far (token ids; sync or
                                          async, e.g. a vLLM client call); the rows run concurrently
    environment(task, completion, key) -> leap.Evaluation: an episode environment (leap.episode), e.g.
                                          leap.verl.sandbox_environment(); key is leap.sample_key of the
                                          row's group, member and turn over the whole batch
    task_of(prompt)                    -> the row's task (TRL hands rollout_func only the prompts)

    Turn 1 for every row; the turn-1 verdicts are gathered from every process (a group of
    trainer.num_generations consecutive rows may straddle processes, as TRL's rewards do) and the
    gate (LEAP's band, or FailBandGate(t_min, t_max)) decides each group once; rows of expanded
    groups that failed get the feedback and another turn, up to max_turns. Returns prompt_ids,
    completion_ids (the turns and the feedback between them), logprobs, env_mask (0 on feedback
    tokens) and, for reward functions and logs, solved_turn, speedup, verdict, gate and turns."""

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        encode = encode_prompt or (lambda p, t: list(tokenizer.apply_chat_template(
            p, add_generation_prompt=True, tokenize=True)) if isinstance(p, list) else list(tokenizer.encode(p)))
        feedback_ids = encode_feedback or (lambda text, t: list(tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True)))
        rows = len(prompts)
        group_size = _group_size(trainer)
        first_row = trainer.accelerator.process_index * rows
        prompt_ids = [encode(p, trainer) for p in prompts]
        completion: list[list[int]] = [[] for _ in range(rows)]
        logprobs: list[list[float]] = [[] for _ in range(rows)]
        mask: list[list[int]] = [[] for _ in range(rows)]
        groups = _GatheredGroups(trainer, rows, group_size, band_for(group_size, group_size, t_min, t_max))

        async def episode(row: int) -> Any:
            async def policy(task: Any, so_far: Any, key: SampleKey) -> Completion:
                if so_far:  # the sandbox's feedback on the last turn, env_mask 0
                    last = so_far[-1]
                    ids = list(feedback_ids(feedback_template.format(verdict=last.verdict.name,
                                                                     feedback=last.feedback), trainer))
                    completion[row].extend(ids)
                    logprobs[row].extend([0.0] * len(ids))
                    mask[row].extend([0] * len(ids))
                value = generate(prompt_ids[row] + completion[row], trainer)
                generation = await value if inspect.isawaitable(value) else value
                ids = list(generation.completion_ids)
                completion[row].extend(ids)
                logprobs[row].extend(list(generation.logprobs) if generation.logprobs else [0.0] * len(ids))
                mask[row].extend([1] * len(ids))
                return Completion(generation.text, len(ids))

            global_row = first_row + row
            return await run_sample_episode(task_of(prompts[row]), policy, environment,
                                            coordinator=cast(Any, groups), sample=global_row % group_size,
                                            group_id=global_row // group_size, task_index=global_row // group_size,
                                            max_turns=max_turns)

        async def all_rows() -> list[Any]:
            return list(await asyncio.gather(*[episode(row) for row in range(rows)]))

        episodes = asyncio.run(all_rows())
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": logprobs, "env_mask": mask,
                "solved_turn": [e.outcome.solved_turn for e in episodes],
                "speedup": [e.outcome.speedup for e in episodes],
                "verdict": [e.outcome.best_verdict.name for e in episodes],
                "gate": [e.decision.expansion.name for e in episodes],
                "turns": [sum(1 for t in e.turns if t.completion is not None) for e in episodes]}

    return rollout_func


def _group_size(trainer: Any) -> int:
    training = trainer.model.training if getattr(trainer, "model", None) is not None else True
    return int(trainer.num_generations if training else trainer.num_generations_eval)


class _GatheredGroups:
    """What run_sample_episode asks of a coordinator (group_size, decide) for one process's rows of a
    TRL batch: when every local row has reported its turn-1 verdict, the verdicts of all processes are
    gathered (one collective, in process order, as TRL gathers rewards), the gate decides each group of
    group_size consecutive rows, and each row gets its group's decision."""

    def __init__(self, trainer: Any, rows: int, group_size: int, gate: Any) -> None:
        self.trainer, self.rows, self.group_size, self.gate = trainer, rows, group_size, gate
        self.first_row = trainer.accelerator.process_index * rows
        self.verdicts: dict[int, str] = {}
        self.decisions: dict[int, Any] = {}
        self.ready: Optional[asyncio.Event] = None

    def join(self, group_id: Any) -> int:
        raise RuntimeError("make_rollout_func passes each row's sample index itself")

    async def decide(self, group_id: Any, sample: int, verdict: Any, *, task_id: int = 0) -> Any:
        if self.ready is None:
            self.ready = asyncio.Event()
        self.verdicts[int(group_id) * self.group_size + sample - self.first_row] = verdict.name
        if len(self.verdicts) == self.rows:
            everyone = _gather_object([self.verdicts[row] for row in range(self.rows)])
            if len(everyone) % self.group_size:
                raise ValueError(f"{len(everyone)} rows over all processes do not split into groups of "
                                 f"{self.group_size}")
            for start in range(0, len(everyone), self.group_size):
                stats = _core.group_stats([_core.Verdict.__members__[v] for v in everyone[start:start + self.group_size]])
                expansion, reason = self.gate.assess(stats)
                self.decisions[start // self.group_size] = _core.GateDecision(expansion, reason)
            self.ready.set()
        await self.ready.wait()
        return self.decisions[int(group_id)]
