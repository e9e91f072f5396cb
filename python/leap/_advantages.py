# SPDX-License-Identifier: Apache-2.0
"""The batched advantages over a trainer's arrays. Every function takes numpy arrays or torch CPU
tensors without copying them, validates everything before writing, runs the C++ core without the
GIL, and writes into ``out`` when given (returning it) or into a new array (a tensor when the inputs
were tensors). An ``out`` that shares memory with any input is a ValueError naming that input, except
``out`` as the rewards or scores array itself (computed in place, the same numbers)."""
from __future__ import annotations

from typing import Optional, Union

from . import _core
from ._convert import ArrayLike, ArrayResult, as_array, as_output, dense_group_ids, result


def rank_advantages(solved_turn: ArrayLike, group_ids: ArrayLike, *, speedup: Optional[ArrayLike] = None,
                    tokens: Optional[ArrayLike] = None, verdict: Optional[ArrayLike] = None,
                    order: Optional[_core.KernelOrder] = None, out: Optional[ArrayLike] = None) -> ArrayResult:
    """LEAP's rank-based advantage: within each group every pair plays one match under ``order``
    (``leap.KernelOrder()`` by default), and each sample gets (wins - losses) / (G - 1).

    solved_turn: integers, the 1-based turn of the first correct kernel, 0 = never solved.
    group_ids:   one id per sample (any integers, or hashable uids in an object array).
    speedup:     float64/float32 (NaN, 0 or negative = unknown), used by orders with a speedup key,
                 under which an unknown speedup loses to every known one of its turn.
    tokens:      integers >= 0, completion tokens, used by orders with a token key.
    verdict:     integer ``leap.Verdict`` values, the best verdict reached (by_severity orders);
                 default: correct when solved, else compile_error.
    out:         float64 or float32, one per sample.
    The columns are gathered into one C++ Outcome per sample (the one copy); the rest runs in place.
    """
    ids = dense_group_ids(group_ids)
    out_array = _core._rank_advantages(
        as_array(solved_turn, "solved_turn"), ids, as_array(speedup, "speedup"), as_array(tokens, "tokens"),
        as_array(verdict, "verdict"), _core.KernelOrder() if order is None else order, as_output(out))
    return result(out, out_array, (solved_turn, speedup, tokens, verdict))


def rank_advantages_of_scores(scores: ArrayLike, group_ids: ArrayLike, tolerance: float = 0.0, *,
                              out: Optional[ArrayLike] = None) -> ArrayResult:
    """The rank-based advantage over one scalar score per sample: the higher score wins a match and
    scores within ``tolerance`` tie. A success at turn t scored ``max_turns + 1 - t`` and a failure 0
    give exactly LEAP's published order. scores: float64 or float32 (out of the same dtype)."""
    ids = dense_group_ids(group_ids)
    out_array = _core._rank_advantages_of_scores(as_array(scores, "scores"), ids, float(tolerance), as_output(out))
    return result(out, out_array, (scores,))


def grpo_advantages(rewards: ArrayLike, group_ids: ArrayLike, *, epsilon: float = 1e-6, scale_by_std: bool = True,
                    out: Optional[ArrayLike] = None) -> ArrayResult:
    """GRPO's z-score, (r - mean) / (std + epsilon) with the unbiased std; ``scale_by_std=False`` is
    Dr.GRPO (r - mean). A group of one gets 0. rewards: float64 or float32 (out of the same dtype)."""
    ids = dense_group_ids(group_ids)
    out_array = _core._grpo_advantages(as_array(rewards, "rewards"), ids, float(epsilon), bool(scale_by_std),
                                       as_output(out))
    return result(out, out_array, (rewards,))


def rloo_advantages(rewards: ArrayLike, group_ids: ArrayLike, *, out: Optional[ArrayLike] = None) -> ArrayResult:
    """RLOO: each reward minus the mean of the other members of its group. A group of one gets 0."""
    ids = dense_group_ids(group_ids)
    out_array = _core._rloo_advantages(as_array(rewards, "rewards"), ids, as_output(out))
    return result(out, out_array, (rewards,))


def normalize_advantages(advantages: ArrayLike, group_ids: Optional[ArrayLike] = None,
                         normalization: Union[str, _core.AdvantageNormalization] = "group_std", *,
                         epsilon: float = 1e-6) -> ArrayResult:
    """Rescales advantages in place and returns them: "group_std" divides each group by (its unbiased
    std + epsilon), "batch_rms" the batch by (its root mean square + epsilon), "none" leaves them.
    Only scales, never shifts. group_ids are needed by group_std only."""
    if isinstance(normalization, str):
        try:
            normalization = _core.AdvantageNormalization.__members__[normalization]
        except KeyError:
            raise ValueError(f"normalization {normalization!r} is not one of "
                             f"{', '.join(_core.AdvantageNormalization.__members__)}") from None
    ids = None if group_ids is None else dense_group_ids(group_ids)
    _core._normalize_advantages(as_output(advantages), ids, normalization, float(epsilon))
    return advantages
