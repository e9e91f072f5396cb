# SPDX-License-Identifier: Apache-2.0
"""leap's advantages as verl advantage estimators.

Importing this module registers two estimators with verl's registry when verl is importable
(``verl.trainer.ppo.core_algos.register_adv_est``):

    leap_rank   LEAP's rank-based advantage over the outcome score, (wins - losses) / (G - 1)
    leap_grpo   GRPO's z-score computed by leap (Dr.GRPO with norm_adv_by_std_in_grpo=False)

Choose one with ``algorithm.adv_estimator=leap_rank`` and import ``leap.verl`` where verl's driver
runs (for instance at the top of your custom reward function's file, which verl imports). Without
verl the functions are plain functions of torch tensors.

Both take verl's estimator arguments: the outcome score of a sequence is
``token_level_rewards.sum(-1)``, ``index`` holds the group uids (any hashable values), and the
per-sequence advantage is broadcast over ``response_mask``; both return (advantages, returns), equal.

Reward encoding for leap_rank. The rank advantage only compares scores within a group: the higher
wins, and scores within ``leap_score_tolerance`` (read from the algorithm config, default 0) tie.
  * LEAP's published order: score a success at turn t as ``max_turns + 1 - t`` and a failure as 0
    (``turn_score``). The advantages then equal leap.rank_advantages with KernelOrder.turns_only().
  * Turn, then speedup within a relative band tol: ``turn_and_speedup_score`` adds log(speedup) to
    a turn score scaled so that turns always dominate, and ``speedup_tolerance(tol)`` = log(1 + tol)
    is the tolerance to configure. Same turn: the faster wins unless within a factor 1 + tol (up to
    rounding at the band's edge); an unknown speedup counts as 1.

The one deliberate difference from verl's GRPO: a group of one sample gets advantage 0 (it has no
baseline); verl's GRPO gives it r / (1 + epsilon).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from . import _advantages
from ._convert import dense_group_ids

if TYPE_CHECKING:  # imported where verl calls in (torch is there whenever verl is), not by `import leap.verl`
    import numpy.typing as npt
    import torch

# verl's estimator signature: (token_level_rewards, response_mask, index, epsilon, norm_adv_by_std_in_grpo,
# config, **kwargs) -> (advantages, returns), both (batch, response_length).
Estimator = Callable[..., "tuple[torch.Tensor, torch.Tensor]"]

__all__ = ["leap_grpo_advantage", "leap_rank_advantage", "registered", "speedup_tolerance",
           "turn_and_speedup_score", "turn_score"]

TURN_SCALE = 64.0  # turn steps in turn_and_speedup_score; log-speedups are clamped well inside it
_LOG_SPEEDUP_LIMIT = TURN_SCALE / 4


def turn_score(solved_turn: int, max_turns: int) -> float:
    """The scalar reward that gives LEAP's published order: max_turns + 1 - t for a success at turn
    t >= 1, 0 for a failure (solved_turn 0)."""
    if solved_turn < 0 or solved_turn > max_turns:
        raise ValueError(f"solved_turn ({solved_turn}) must lie in [0, max_turns ({max_turns})]; 0 = never solved")
    return float(max_turns + 1 - solved_turn) if solved_turn > 0 else 0.0


def turn_and_speedup_score(solved_turn: int, max_turns: int, speedup: Optional[float] = None) -> float:
    """A success: TURN_SCALE * (max_turns + 1 - t) + log(speedup), with the log clamped to
    +-TURN_SCALE / 4 so that an earlier turn always wins; a failure: 0. Use with
    leap_score_tolerance = speedup_tolerance(tol)."""
    base = turn_score(solved_turn, max_turns)
    if base == 0.0:
        return 0.0
    if speedup is not None and speedup > 0 and math.isfinite(speedup):
        log_speedup = min(max(math.log(speedup), -_LOG_SPEEDUP_LIMIT), _LOG_SPEEDUP_LIMIT)
    else:
        log_speedup = 0.0
    return TURN_SCALE * base + log_speedup


def speedup_tolerance(relative: float) -> float:
    """The score tolerance that makes speedups within a factor 1 + relative tie."""
    if not relative >= 0:
        raise ValueError(f"relative ({relative}) must be >= 0")
    return math.log1p(relative)


def _setting(config: Any, name: str, default: Any) -> Any:
    """A setting of verl's algorithm config (a dataclass, an omegaconf node or a dict), if present."""
    if config is None:
        return default
    if isinstance(config, dict):
        return config.get(name, default)
    value = getattr(config, name, None)
    if value is None and hasattr(config, "get"):
        try:
            value = config.get(name, None)
        except TypeError:
            value = None
    return default if value is None else value


def _scores_and_ids(token_level_rewards: torch.Tensor, index: Any) -> tuple[torch.Tensor, npt.NDArray[Any]]:
    import torch  # verl's estimators take tensors; torch is there whenever verl is

    if token_level_rewards.dim() != 2:
        raise ValueError(f"token_level_rewards must be (batch, response_length), got {tuple(token_level_rewards.shape)}")
    scores = token_level_rewards.sum(dim=-1).detach()
    if len(index) != scores.shape[0]:
        raise ValueError(f"index has {len(index)} uids but token_level_rewards has {scores.shape[0]} rows")
    compute_dtype = scores.dtype if scores.dtype in (torch.float32, torch.float64) else torch.float32
    return scores.to(device="cpu", dtype=compute_dtype).contiguous(), dense_group_ids(np.asarray(index))


def _broadcast(per_sequence: torch.Tensor, token_level_rewards: torch.Tensor,
               response_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    advantages = per_sequence.to(device=token_level_rewards.device, dtype=token_level_rewards.dtype)
    advantages = advantages.unsqueeze(-1) * response_mask
    return advantages, advantages


def leap_rank_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: Any,
                        epsilon: float = 1e-6, norm_adv_by_std_in_grpo: bool = True, config: Any = None,
                        **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """verl estimator `leap_rank`: (wins - losses) / (G - 1) over the outcome scores within each uid
    group, ties within the config's leap_score_tolerance (default 0). epsilon and
    norm_adv_by_std_in_grpo do not apply to a rank and are ignored."""
    import torch

    scores, ids = _scores_and_ids(token_level_rewards, index)
    tolerance = float(_setting(config, "leap_score_tolerance", 0.0))
    with torch.no_grad():
        per_sequence = _advantages.rank_advantages_of_scores(scores, ids, tolerance)
        return _broadcast(per_sequence, token_level_rewards, response_mask)


def leap_grpo_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: Any,
                        epsilon: float = 1e-6, norm_adv_by_std_in_grpo: bool = True, config: Any = None,
                        **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """verl estimator `leap_grpo`: verl's GRPO, (r - mean) / (std + epsilon) with the unbiased std
    per uid group, or r - mean when norm_adv_by_std_in_grpo is False; a group of one gets 0."""
    import torch

    scores, ids = _scores_and_ids(token_level_rewards, index)
    with torch.no_grad():
        per_sequence = _advantages.grpo_advantages(scores, ids, epsilon=epsilon,
                                                   scale_by_std=bool(norm_adv_by_std_in_grpo))
        return _broadcast(per_sequence, token_level_rewards, response_mask)


ESTIMATORS: dict[str, Estimator] = {"leap_rank": leap_rank_advantage, "leap_grpo": leap_grpo_advantage}


def _register() -> tuple[str, ...]:
    """Registers ESTIMATORS with verl when verl is importable; returns the names registered."""
    try:
        from verl.trainer.ppo.core_algos import register_adv_est
    except ImportError:
        return ()
    for name, function in ESTIMATORS.items():
        register_adv_est(name)(function)
    return tuple(ESTIMATORS)


registered = _register()
