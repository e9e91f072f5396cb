# SPDX-License-Identifier: Apache-2.0
"""The reward encoding the trainer adapters share: one scalar per episode that ranks in LEAP's order.

Every adapter (verl, TRL, OpenRLHF) hands its trainer one number per sample, so everything the rank
needs (the turn that solved it, its speedup) must be in that number:

    turn_and_speedup_score(t, max_turns, speedup)   0 for a failure; for a success at turn t,
        TURN_SCALE * (max_turns + 1 - t) + log(speedup), the log clamped to +-TURN_SCALE / 8, or
        TURN_SCALE * (max_turns + 1 - t) - TURN_SCALE / 4 when the speedup is unknown: below every
        known speed of its turn, so a kernel never gains by hiding its speed (as in KernelOrder)
    turn_score(t, max_turns)                         max_turns + 1 - t, 0 for a failure

Ranked with a tolerance (scores within it tie), the encoding gives an order:
  * TURNS_ONLY_TOLERANCE (32): LEAP's published order, earlier turn wins, speed ignored;
  * ``speedup_tolerance(tol)`` = log(1 + tol): turn, then speedup outside a relative band tol, an
    unknown speedup below every known one;
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
# Within a turn's TURN_SCALE: a known speedup at log(speedup) clamped to +-8 (a factor of ~2981), an
# unknown one at -16, 8 below the slowest known. So scores of one turn lie in [-16, 8] around the turn's
# base, at most 24 apart, and scores of different turns (or a success and a failure) at least
# 64 - 24 = 40 apart.
_LOG_SPEEDUP_LIMIT = TURN_SCALE / 8
_UNKNOWN_SPEEDUP = -TURN_SCALE / 4
TURNS_ONLY_TOLERANCE = TURN_SCALE / 2  # ties every same-turn pair (<= 24 apart), no two turns (>= 40 apart)


def turn_score(solved_turn: int, max_turns: int) -> float:
    """The scalar reward that gives LEAP's published order: max_turns + 1 - t for a success at turn
    t >= 1, 0 for a failure (solved_turn 0)."""
    if solved_turn < 0 or solved_turn > max_turns:
        raise ValueError(f"solved_turn ({solved_turn}) must lie in [0, max_turns ({max_turns})]; 0 = never solved")
    return float(max_turns + 1 - solved_turn) if solved_turn > 0 else 0.0


def turn_and_speedup_score(solved_turn: int, max_turns: int, speedup: Optional[float] = None) -> float:
    """A success: TURN_SCALE * (max_turns + 1 - t) + log(speedup), with the log clamped to
    +-TURN_SCALE / 8 so that an earlier turn always wins; a failure: 0. An unknown (None, NaN, <= 0)
    speedup scores TURN_SCALE / 4 below the turn's base, under every known speed of the turn (an
    unknown speedup never pays, as in KernelOrder); +inf is known (clamped). Rank with
    leap_score_tolerance = TURNS_ONLY_TOLERANCE for the published order, speedup_tolerance(tol) for
    a speedup band."""
    base = turn_score(solved_turn, max_turns)
    if base == 0.0:
        return 0.0
    if speedup is None or not speedup > 0:  # NaN too
        return TURN_SCALE * base + _UNKNOWN_SPEEDUP
    return TURN_SCALE * base + min(max(math.log(speedup), -_LOG_SPEEDUP_LIMIT), _LOG_SPEEDUP_LIMIT)


def speedup_tolerance(relative: float) -> float:
    """The score tolerance that makes speedups within a factor 1 + relative tie. Below
    e^8 - 1 (~2980), so that the band never reaches from the slowest known speed to an unknown one."""
    if not relative >= 0:
        raise ValueError(f"relative ({relative}) must be >= 0")
    tolerance = math.log1p(relative)
    if not tolerance < -_LOG_SPEEDUP_LIMIT - _UNKNOWN_SPEEDUP:  # the gap below the slowest known speed
        raise ValueError(f"relative ({relative}) is a band of a factor {1 + relative:g}, which would tie an unknown "
                         f"speedup with known ones; use one below {math.expm1(_LOG_SPEEDUP_LIMIT):.0f}, or "
                         "TURNS_ONLY_TOLERANCE to ignore speed")
    return tolerance


def score_fields(solved_turn: int, max_turns: int, verdict: str, speedup: float,
                 masked: bool = False) -> dict[str, Any]:
    """The score and extra fields of one episode, as the adapters report them. A masked episode (its
    environment failed) scores 0 and says masked = 1; its loss mask is the trainer's part."""
    score = 0.0 if masked else turn_and_speedup_score(solved_turn, max_turns, speedup)
    return {"score": score, "verdict": verdict, "speedup": speedup, "solved_turn": solved_turn,
            "masked": int(masked)}
