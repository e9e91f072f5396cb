# SPDX-License-Identifier: Apache-2.0
"""Signatures that ``inspect.signature`` (and so IDEs, ``help`` and trainers' config tools) can read.

pybind11 functions are builtins without a text signature, so inspect cannot read them. The core's
public functions therefore reach ``leap`` as the Python functions below, each a direct call of its
binding, and the core's public classes get a ``__signature__`` of their constructor, built from the
class itself: a field's default is read from a default-constructed instance, so the C++ defaults are
not written a second time here. python/tests/test_signatures.py compares both with the bindings.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Sequence

from . import _core
from ._core import (AdvantageNormalization, Expansion, FailBandGate, GateReason, GroupStats, KernelOrder, Outcome,
                    Verdict)

if TYPE_CHECKING:  # numpy is imported on first use (see _convert); annotations only name it
    import numpy as np
    import numpy.typing as npt


def group_stats(turn1: Sequence[Verdict]) -> GroupStats:
    """Counts the turn-1 verdicts of one group."""
    return _core.group_stats(turn1)


def turn_advantages(advantage: float, num_turns: int, solved_turn: int, gamma: float) -> npt.NDArray[np.float64]:
    """One advantage per turn: with advantage > 0 and a success at turn k, turn t <= k gets
    gamma^(k - t) * advantage (later turns 0); otherwise every turn gets the advantage."""
    return _core.turn_advantages(advantage, num_turns, solved_turn, gamma)


def rank_advantages_reference(group: Sequence[Outcome], order: KernelOrder | None = None) -> list[float]:
    """One group's advantages by the O(G^2) pairwise definition (the oracle of the tests);
    ``order`` defaults to ``KernelOrder()``."""
    return _core.rank_advantages_reference(group, KernelOrder() if order is None else order)


def rank_advantages_of_scores_reference(group: Sequence[float], tolerance: float = 0.0) -> list[float]:
    """One group's advantages over scalar scores by the O(G^2) pairwise definition."""
    return _core.rank_advantages_of_scores_reference(group, tolerance)


def _fields_signature(cls: type) -> inspect.Signature:
    """Keyword-only parameters, one per writable field in the binding's order, each defaulting to
    the field's value in cls() (the C++ default) and annotated with that value's type."""
    default = cls()
    parameters = []
    for name, member in vars(cls).items():
        if isinstance(member, property) and member.fset is not None:
            value = getattr(default, name)
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=value,
                                                annotation=type(value)))
    return inspect.Signature(parameters)


def _positional_signature(*names_and_types: tuple[str, type]) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation)
                              for name, annotation in names_and_types])


def _attach_class_signatures() -> None:
    """Sets ``__signature__`` on the core's classes (inspect reads it before anything else)."""
    for value_type in (Outcome, KernelOrder, GroupStats):
        setattr(value_type, "__signature__", _fields_signature(value_type))
    setattr(FailBandGate, "__signature__", _positional_signature(("t_min", int), ("t_max", int)))
    for enum in (Verdict, Expansion, GateReason, AdvantageNormalization):
        setattr(enum, "__signature__", _positional_signature(("value", int)))


_attach_class_signatures()
