# SPDX-License-Identifier: Apache-2.0
"""Signatures that ``inspect.signature`` (and so IDEs, ``help`` and trainers' config tools) can read.

pybind11 functions are builtins without a text signature, so inspect cannot read them. The core's
public functions therefore reach ``leap`` as the Python functions below, each a direct call of its
binding, and the core's public classes get a ``__signature__`` of their constructor, read from what
pybind11 records of the binding (or, for KernelOrder's **kwargs constructor, from its fields and a
default-constructed instance), so nothing the C++ side says is written a second time here and a class
bound later gets its signature too. python/tests/test_signatures.py compares both with the bindings.
"""
from __future__ import annotations

import ast
import inspect
import re
from typing import TYPE_CHECKING, Optional, Sequence

from . import _core
from ._core import GroupStats, KernelOrder, Outcome, Verdict

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
    the field's value in cls() (the C++ default) and annotated with that value's type: for a class
    bound with a **kwargs constructor that takes exactly its fields (KernelOrder)."""
    default = cls()
    parameters = []
    for name, member in vars(cls).items():
        if isinstance(member, property) and member.fset is not None:
            value = getattr(default, name)
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=value,
                                                annotation=type(value)))
    return inspect.Signature(parameters)


def _split_parameters(text: str) -> list[str]:
    """A pybind11 parameter list split at its top-level commas (types and defaults hold commas)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for character in text:
        depth += character in "([{<"
        depth -= character in ")]}>"
        if character == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(character)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


_BUILTIN_TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str, "object": object}


def _annotation(text: str) -> object:
    """The type a pybind11 annotation names: a builtin, a class of the core, else the text itself."""
    if text in _BUILTIN_TYPES:
        return _BUILTIN_TYPES[text]
    match = re.fullmatch(r"leap\._core\.(\w+)", text)
    return getattr(_core, match.group(1)) if match and hasattr(_core, match.group(1)) else text


class _Unreadable(Exception):
    pass


def _default(text: str) -> object:
    """The value a pybind11 default's repr stands for: a literal, nan/inf, or a member of a core enum."""
    if text in ("nan", "inf", "-inf"):
        return float(text)
    member = re.fullmatch(r"<(\w+)\.(\w+): -?\d+>", text)
    if member:
        return getattr(getattr(_core, member.group(1)), member.group(2))
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise _Unreadable(text) from None


def _constructor_signature(cls: type) -> Optional[inspect.Signature]:
    """The constructor's signature as pybind11 records it in __init__'s docstring (names, order,
    keyword-only marker, defaults, types), without self; None when there is no single one to read
    (an overloaded constructor, none at all, or a default that is no literal)."""
    lines = (getattr(vars(cls).get("__init__"), "__doc__", None) or "").splitlines()
    match = re.fullmatch(r"__init__\(self: [\w.]+(?:, (.*))?\) -> None", lines[0]) if lines else None
    if match is None:
        return None
    parameters: list[inspect.Parameter] = []
    kind: inspect._ParameterKind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    for part in _split_parameters(match.group(1) or ""):
        if part == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        if part.startswith("*"):
            return None
        name, _, rest = part.partition(": ")
        type_text, _, default_text = rest.partition(" = ")
        try:
            default = _default(default_text) if default_text else inspect.Parameter.empty
        except _Unreadable:
            return None
        parameters.append(inspect.Parameter(name, kind, default=default, annotation=_annotation(type_text)))
    return inspect.Signature(parameters)


def _attach_class_signatures() -> None:
    """Sets ``__signature__`` (which inspect reads before anything else) on every public class of the
    core whose constructor has one signature: KernelOrder's from its fields, the others' from what
    pybind11 recorded of the binding. A class Python cannot construct gets none."""
    for name in dir(_core):
        cls = getattr(_core, name)
        if name.startswith("_") or not isinstance(cls, type):
            continue
        signature = _fields_signature(cls) if cls is KernelOrder else _constructor_signature(cls)
        if signature is not None:
            setattr(cls, "__signature__", signature)


_attach_class_signatures()
