# SPDX-License-Identifier: Apache-2.0
"""leap in OpenRLHF: the rank advantage through OpenRLHF's experience maker, and the sandbox as its
reward function.

OpenRLHF's estimators are a fixed if/elif in ``RemoteExperienceMaker.compute_advantages_and_returns``
(openrlhf/trainer/ppo_utils/experience_maker.py). Its ``dr_grpo`` branch subtracts each prompt
group's mean reward and then builds per-token returns (the reward on the last action token, plus
OpenRLHF's KL term when the KL is not a loss, summed with gamma 1) with no normalisation. The
subclass puts leap's advantage into each sample's reward first, so that branch carries it to the
tokens unchanged (a rank advantage sums to 0 in its group: the mean it subtracts is 0 up to
float32 rounding). Run with ``--algo.advantage.estimator dr_grpo`` and patch before the trainer is
built, in the driver:

    import leap.openrlhf
    leap.openrlhf.patch_openrlhf(score_tolerance=leap.verl.TURNS_ONLY_TOLERANCE)
    # then OpenRLHF's train_ppo_ray entry point, in this process

OpenRLHF's length penalties (DAPO overlong, ProRL stop) run inside the same method after this
subclass and so act on the advantage, not the raw reward: leave them off with leap.

``reward_func`` is OpenRLHF's custom reward function (``--reward.remote_url /path/to/file.py`` with
a file exposing ``reward_func``): the label is the task, the query's last fenced block the kernel.
"""
from __future__ import annotations

import asyncio
import importlib
import itertools
import json
from typing import Any, Optional, Sequence

import numpy as np

from . import _advantages as _untyped_advantages
from .episode import Completion, Evaluation, sample_key
from .verl import sandbox_environment, turn_and_speedup_score

_advantages: Any = _untyped_advantages

__all__ = ["leap_experience_maker", "patch_openrlhf", "reward_func"]


def leap_experience_maker(base: type, estimator: str = "rank", score_tolerance: float = 0.0) -> type:
    """A subclass of OpenRLHF's RemoteExperienceMaker (`base`) whose compute_advantages_and_returns
    replaces each sample's reward by leap's advantage within its prompt group (estimator "rank",
    "grpo" or "dr_grpo"), then runs OpenRLHF's dr_grpo branch."""

    class LeapExperienceMaker(base):  # type: ignore[misc]
        leap_estimator = estimator
        leap_score_tolerance = float(score_tolerance)

        def compute_advantages_and_returns(self, experiences: list[Any]) -> Any:
            import torch

            args = self.strategy.args
            if args.algo.advantage.estimator != "dr_grpo":
                raise ValueError(f"leap.openrlhf: run OpenRLHF with --algo.advantage.estimator dr_grpo (got "
                                 f"{args.algo.advantage.estimator!r}); its branch carries leap's advantage to the tokens")
            n = int(args.rollout.n_samples_per_prompt)
            positions = [list(experience.index) for experience in experiences]
            order = np.fromiter(itertools.chain.from_iterable(positions), dtype=np.int64)
            raw = torch.cat([experience.rewards for experience in experiences]).detach().to("cpu", torch.float64)
            if len(order) % n:
                raise ValueError(f"{len(order)} samples do not split into prompt groups of {n}")
            rewards = np.empty(len(order))
            rewards[order] = raw.numpy()  # OpenRLHF's prompt order: a group is n consecutive samples
            groups = np.arange(len(order), dtype=np.uint32) // np.uint32(n)
            if self.leap_estimator == "rank":
                advantages = _advantages.rank_advantages_of_scores(rewards, groups, self.leap_score_tolerance)
            elif self.leap_estimator in ("grpo", "dr_grpo"):
                advantages = _advantages.grpo_advantages(rewards, groups, scale_by_std=self.leap_estimator == "grpo")
            else:
                raise ValueError(f"estimator {self.leap_estimator!r}: expected 'rank', 'grpo' or 'dr_grpo'")
            start = 0
            for experience, rows in zip(experiences, positions):
                values = torch.from_numpy(advantages[order[start:start + len(rows)]])
                experience.rewards = values.to(device=experience.rewards.device, dtype=experience.rewards.dtype)
                start += len(rows)
            return super().compute_advantages_and_returns(experiences)

    LeapExperienceMaker.__module__ = __name__
    LeapExperienceMaker.__qualname__ = "LeapExperienceMaker"
    return LeapExperienceMaker


def patch_openrlhf(estimator: str = "rank", score_tolerance: float = 0.0) -> type:
    """Makes OpenRLHF's PPO trainer build LeapExperienceMaker (the name its trainer module
    instantiates); call it in the driver before the trainer is made. Returns the class."""
    trainer_module: Any = importlib.import_module("openrlhf.trainer.ppo_trainer")

    original = trainer_module.RemoteExperienceMaker
    base = getattr(original, "_leap_base", original)
    maker = leap_experience_maker(base, estimator, score_tolerance)
    maker._leap_base = base  # type: ignore[attr-defined]
    trainer_module.RemoteExperienceMaker = maker
    return maker


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], max_turns: int = 1,
                sandbox: Optional[str] = None, **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's reward function (called in a thread): evaluates each query's kernel against its
    label's task (a built-in name, or a spec as JSON text) with leap.verl.sandbox_environment() (the
    last fenced block of the query is the kernel). "rewards":
    turn_and_speedup_score of solved turn 1 or 0; "scores" (OpenRLHF's dynamic filtering, in [0, 1]):
    1 solved, 0 not; "extra_logs": verdict index (0 compile_error .. 4 correct), speedup, solved."""
    import torch

    environment = sandbox_environment(sandbox)
    tasks = [json.loads(label) if isinstance(label, str) and label.lstrip().startswith("{") else label
             for label in labels]

    async def evaluate_all() -> list[Evaluation]:
        return list(await asyncio.gather(*[environment(task, Completion(query), sample_key(0, i, 1))
                                           for i, (query, task) in enumerate(zip(queries, tasks))]))

    evaluations = asyncio.run(evaluate_all())
    names = ("compile_error", "runtime_error", "timeout", "wrong_answer", "correct")
    solved = [1 if e.verdict.name == "correct" else 0 for e in evaluations]
    scores = [turn_and_speedup_score(s, max_turns, e.speedup)
              for s, e in zip(solved, evaluations)]
    rewards = torch.tensor(scores, dtype=torch.float32)
    return {"rewards": rewards, "scores": torch.tensor([float(s) for s in solved]),
            "extra_logs": {"leap_verdict": torch.tensor([float(names.index(e.verdict.name)) for e in evaluations]),
                           "leap_speedup": torch.tensor([e.speedup for e in evaluations]),
                           "leap_solved": torch.tensor([float(s) for s in solved])}}
