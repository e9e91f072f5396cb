# SPDX-License-Identifier: Apache-2.0
"""inspect.signature reads every public name of leap, and what it reads is what the binding takes:
the same parameters in the same order and kind, defaults that are the C++ defaults, and calls that
give what the binding gives."""
import inspect

import numpy as np
import pytest

import leap
import leap._core as core
from test_stubs import runtime_signatures, split_top_level


def signature_triples(signature):
    """(name, kind, has_default) as test_stubs reads pybind11's docstrings."""
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional", inspect.Parameter.KEYWORD_ONLY: "keyword"}
    return tuple((p.name, kinds[p.kind], p.default is not inspect.Parameter.empty)
                 for p in signature.parameters.values())


PUBLIC_CLASSES = sorted(n for n in dir(core) if not n.startswith("_") and isinstance(getattr(core, n), type))


def constructible(cls):
    """Whether Python can construct cls: pybind11 binds a constructor, or its __init__ raises."""
    return (cls.__init__.__doc__ or "").startswith("__init__(")


@pytest.mark.parametrize("name", leap.__all__)
def test_every_public_name_has_a_signature(name):
    value = getattr(leap, name)
    assert inspect.isclass(value) or inspect.isfunction(value), name
    if inspect.isclass(value) and value.__module__ == core.__name__ and not constructible(value):
        # Made by the core only (a step's metrics): no signature to show, and a call says so.
        with pytest.raises(TypeError, match="No constructor defined"):
            value()
        return
    assert isinstance(inspect.signature(value), inspect.Signature)


@pytest.mark.parametrize("name", ["group_stats", "turn_advantages", "rank_advantages_reference",
                                  "rank_advantages_of_scores_reference"])
def test_the_core_functions_take_the_bindings_parameters(name):
    (binding,) = runtime_signatures(getattr(core, name), name)
    assert signature_triples(inspect.signature(getattr(leap, name))) == binding


def binding_defaults(cls):
    """name -> the default's text, as pybind11 wrote the constructor's signature."""
    line = cls.__init__.__doc__.splitlines()[0]
    inner = line[len("__init__("):line.rindex(") -> ")]
    return {part.split(":", 1)[0]: part.split(" = ", 1)[1] for part in split_top_level(inner) if " = " in part}


@pytest.mark.parametrize("name", [n for n in PUBLIC_CLASSES if n != "KernelOrder"])
def test_a_constructors_signature_is_the_bindings(name):
    cls = getattr(core, name)
    if not constructible(cls):
        pytest.skip(f"{name} has no constructor")
    (binding,) = runtime_signatures(cls.__init__, "__init__")
    assert binding[0][0] == "self"
    signature = inspect.signature(cls)
    assert signature_triples(signature) == binding[1:]
    # Each default is the value the binding's default stands for (a literal, nan, an enum member).
    defaults = {n: p.default for n, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
    assert {n: repr(v) for n, v in defaults.items()} == binding_defaults(cls)
    # Each annotation is the class or builtin type pybind11 names, resolved.
    for parameter in signature.parameters.values():
        assert isinstance(parameter.annotation, type), (name, parameter)


def test_kernel_order_takes_each_field_by_keyword():
    # Bound as **kwargs (refusing unknown names); its signature lists the fields, keyword-only.
    signature = inspect.signature(leap.KernelOrder)
    fields = [n for n, v in vars(core.KernelOrder).items() if isinstance(v, property) and v.fset is not None]
    assert list(signature.parameters) == fields
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())


@pytest.mark.parametrize("cls", [leap.Outcome, leap.GroupStats, leap.KernelOrder])
def test_the_signatures_defaults_are_the_cpp_defaults(cls):
    signature = inspect.signature(cls)
    default = cls()
    for parameter in signature.parameters.values():
        value = getattr(default, parameter.name)
        assert parameter.annotation is type(value)
        same = value == parameter.default or (value != value and parameter.default != parameter.default)  # NaN speedup
        assert same, (cls, parameter)
    # Built from the signature's defaults, bound by name, the object equals the default-constructed one.
    bound = signature.bind()
    bound.apply_defaults()
    assert repr(cls(**bound.kwargs)) == repr(default)
    # A changed keyword reaches the field.
    first = next(iter(signature.parameters.values()))
    changed = not first.default if isinstance(first.default, bool) else first.default + 1
    assert getattr(cls(**{first.name: changed}), first.name) == changed


def test_kernel_order_defaults_match_the_cpp_turns_only_order():
    # KernelOrder{} is the published order: the signature's defaults build exactly that.
    defaults = {n: p.default for n, p in inspect.signature(leap.KernelOrder).parameters.items()}
    assert leap.KernelOrder(**defaults) == leap.KernelOrder.turns_only()


def test_the_python_functions_give_what_the_bindings_give():
    outcomes = [leap.Outcome(solved_turn=t, best_verdict=leap.Verdict.correct if t else leap.Verdict.timeout,
                             speedup=s) for t, s in [(1, 1.0), (2, 3.0), (0, float("nan")), (1, 2.0)]]
    order = leap.KernelOrder.with_speedup(0.05)
    assert leap.rank_advantages_reference(outcomes) == core.rank_advantages_reference(outcomes)
    assert leap.rank_advantages_reference(outcomes, order) == core.rank_advantages_reference(outcomes, order)
    assert leap.rank_advantages_reference(outcomes, order) != leap.rank_advantages_reference(outcomes)
    scores = [3.0, 1.0, 1.04, 0.0]
    assert leap.rank_advantages_of_scores_reference(scores) == core.rank_advantages_of_scores_reference(scores)
    assert (leap.rank_advantages_of_scores_reference(scores, 0.05)
            == core.rank_advantages_of_scores_reference(scores, 0.05))
    assert np.array_equal(leap.turn_advantages(0.5, 3, 2, 0.9), core.turn_advantages(0.5, 3, 2, 0.9))
    verdicts = [leap.Verdict.correct, leap.Verdict.timeout, leap.Verdict.compile_error]
    assert leap.group_stats(verdicts) == core.group_stats(verdicts)
    assert leap.group_stats(verdicts).n_fail == 2
