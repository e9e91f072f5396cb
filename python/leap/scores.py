# SPDX-License-Identifier: Apache-2.0
"""The reward encoding the trainer adapters share: one scalar per episode that ranks in LEAP's order.

Every adapter (verl, TRL, OpenRLHF) hands its trainer one number per sample, so everything the rank
needs (the turn that solved it, its speedup) must be in that number:

    turn_and_speedup_score(t, max_turns, speedup)   0 for a failure; for a success at turn t,
        TURN_SCALE * (max_turns + 1 - t) + log(speedup), the log clamped to +-TURN_SCALE / 8
    turn_score(t, max_turns)                         max_turns + 1 - t, 0 for a failure

Ranked with a tolerance (scores within it tie), the encoding gives an order:
  * TURNS_ONLY_TOLERANCE (32): LEAP's published order, earlier turn wins, speed ignored;
  * ``speedup_tolerance(tol)`` = log(1 + tol): turn, then speedup outside a relative band tol;
  * 0: turn, then any speedup difference.

This module imports no trainer: leap.verl, leap.trl and leap.openrlhf all read it, and none of them
imports another (a broken verl on the path must not break a TRL user).
"""
from __future__ import annotations

import math
from typing import Any, Optional

__all__ = ["TURNS_ONLY_TOLERANCE", "TURN_SCALE", "score_fields", "speedup_tolerance", "turn_and_speedup_score",
           "turn_score"]

TURN_SCALE = 64.0  # score units per turn in turn_and_speedup_score
_LOG_SPEEDUP_LIMIT = TURN_SCALE / 8  # |log speedup| at most 8 (a factor of ~2981): same turn differs by <= 16
TURNS_ONLY_TOLERANCE = TURN_SCALE / 2  # ties every same-turn pair (<= 16 apart), no two turns (>= 48 apart)


def turn_score(solved_turn: int, max_turns: int) -> float:
    """The scalar reward that gives LEAP's published order: max_turns + 1 - t for a success at turn
    t >= 1, 0 for a failure (solved_turn 0)."""
    if solved_turn < 0 or solved_turn > max_turns:
        raise ValueError(f"solved_turn ({solved_turn}) must lie in [0, max_turns ({max_turns})]; 0 = never solved")
    return float(max_turns + 1 - solved_turn) if solved_turn > 0 else 0.0


def turn_and_speedup_score(solved_turn: int, max_turns: int, speedup: Optional[float] = None) -> float:
    """A success: TURN_SCALE * (max_turns + 1 - t) + log(speedup), with the log clamped to
    +-TURN_SCALE / 8 so that an earlier turn always wins; a failure: 0. An unknown (None, NaN, <= 0)
    speedup counts as 1. Rank with leap_score_tolerance = TURNS_ONLY_TOLERANCE for the published
    order, speedup_tolerance(tol) for a speedup band."""
    base = turn_score(solved_turn, max_turns)
    if base == 0.0:
        return 0.0
    known = speedup is not None and speedup > 0 and math.isfinite(speedup)
    log_speedup = min(max(math.log(speedup), -_LOG_SPEEDUP_LIMIT), _LOG_SPEEDUP_LIMIT) if known else 0.0  # type: ignore[arg-type]
    return TURN_SCALE * base + log_speedup


def speedup_tolerance(relative: float) -> float:
    """The score tolerance that makes speedups within a factor 1 + relative tie."""
    if not relative >= 0:
        raise ValueError(f"relative ({relative}) must be >= 0")
    return math.log1p(relative)


def score_fields(solved_turn: int, max_turns: int, verdict: str, speedup: float,
                 masked: bool = False) -> dict[str, Any]:
    """The score and extra fields of one episode, as the adapters report them. A masked episode (its
    environment failed) scores 0 and says masked = 1; its loss mask is the trainer's part."""
    known = speedup if math.isfinite(speedup) else None
    score = 0.0 if masked else turn_and_speedup_score(solved_turn, max_turns, known)
    return {"score": score, "verdict": verdict, "speedup": speedup, "solved_turn": solved_turn,
            "masked": int(masked)}
