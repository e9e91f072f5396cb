# SPDX-License-Identifier: Apache-2.0
"""The value types in Python: KernelOrder's fields, defaults and presets as in C++, Outcome, the
normalisation of advantages."""
import math

import numpy as np
import pytest

import leap


def fields(order):
    return {name: getattr(order, name) for name in ("by_turn", "by_severity", "speedup_tolerance", "token_tolerance",
                                                      "tokens_only_when_solved", "turn_weight")}


def test_kernel_order_defaults_and_presets_are_the_cpp_ones():
    published = {"by_turn": True, "by_severity": False, "speedup_tolerance": -1.0, "token_tolerance": -1.0,
                 "tokens_only_when_solved": True, "turn_weight": 1.0}
    assert fields(leap.KernelOrder()) == published
    assert leap.KernelOrder() == leap.KernelOrder.turns_only()
    assert fields(leap.KernelOrder.with_speedup()) == dict(published, speedup_tolerance=0.05)
    assert fields(leap.KernelOrder.with_speedup(0.1)) == dict(published, speedup_tolerance=0.1)
    assert fields(leap.KernelOrder.with_speedup_and_tokens()) == dict(published, speedup_tolerance=0.05,
                                                                      token_tolerance=0.0)
    order = leap.KernelOrder(turn_weight=0.5, by_severity=True)
    assert order.turn_weight == 0.5 and order.by_severity and order != leap.KernelOrder()
    assert "turn_weight=0.5" in repr(order)


def test_kernel_order_matches_and_validation():
    first = leap.Outcome(solved_turn=1, speedup=1.0)
    second = leap.Outcome(solved_turn=2, speedup=2.0)
    failed = leap.Outcome(best_verdict=leap.Verdict.wrong_answer)
    assert leap.KernelOrder().compare(first, second) == 1
    assert leap.KernelOrder(turn_weight=0.25).match(first, second) == 0.25
    assert leap.KernelOrder(turn_weight=0.0).compare(first, second) == 0
    assert leap.KernelOrder(by_turn=False, speedup_tolerance=0.05).compare(first, second) == -1
    assert leap.KernelOrder().compare(second, failed) == 1
    with pytest.raises(ValueError, match="turn_weight"):
        leap.KernelOrder(turn_weight=1.5).validate()
    with pytest.raises(ValueError, match="turn_weight"):
        leap.rank_advantages(np.array([1, 2]), np.array([0, 0]), order=leap.KernelOrder(turn_weight=math.nan))
    with pytest.raises(TypeError):
        leap.KernelOrder(by_turn="yes please")
    # Weighted matches through the batch: two successes at turns 1 and 2 and a failure.
    adv = leap.rank_advantages(np.array([1, 2, 0]), np.array([0, 0, 0]), order=leap.KernelOrder(turn_weight=0.5))
    assert adv.tolist() == [(1 + 0.5) / 2, (1 - 0.5) / 2, -1.0]
    assert leap.rank_advantages_reference([leap.Outcome(solved_turn=t) for t in (1, 2, 0)],
                                          leap.KernelOrder(turn_weight=0.5)) == adv.tolist()


def test_outcome_fields_and_defaults():
    o = leap.Outcome()
    assert o.solved_turn == 0 and o.best_verdict == leap.Verdict.compile_error and math.isnan(o.speedup)
    assert o.tokens == 0 and o == leap.Outcome()
    assert leap.Outcome(solved_turn=2, tokens=5) != o
    assert [int(v) for v in (leap.Verdict.compile_error, leap.Verdict.runtime_error, leap.Verdict.timeout,
                             leap.Verdict.wrong_answer, leap.Verdict.correct)] == [0, 1, 2, 3, 4]


def test_normalize_advantages():
    rng = np.random.default_rng(9)
    ids = rng.integers(0, 20, 400)
    adv = leap.rank_advantages(rng.integers(0, 4, 400), ids)
    original = adv.copy()
    returned = leap.normalize_advantages(adv, ids, "group_std", epsilon=0.0)
    assert returned is adv
    for g in np.unique(ids):
        members = ids == g
        std = original[members].std(ddof=1) if members.sum() > 1 else 0.0
        expected = original[members] / std if std > 0 else original[members]
        assert np.allclose(adv[members], expected, rtol=1e-12, atol=1e-15)
    rms = original.copy()
    leap.normalize_advantages(rms, None, leap.AdvantageNormalization.batch_rms, epsilon=0.0)
    assert math.isclose(float(np.sqrt(np.mean(rms ** 2))), 1.0, rel_tol=1e-12)
    kept = original.copy()
    leap.normalize_advantages(kept, None, "none")
    assert np.array_equal(kept, original)
    with pytest.raises(ValueError, match="group_std needs group_ids"):
        leap.normalize_advantages(original.copy(), None, "group_std")
    with pytest.raises(ValueError, match="'rms' is not one of none, group_std, batch_rms"):
        leap.normalize_advantages(original.copy(), ids, "rms")
    bad = original.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"advantages\[3\] \(nan\) is not finite"):
        leap.normalize_advantages(bad, ids, "batch_rms")
    assert np.isnan(bad[3]) and np.array_equal(np.delete(bad, 3), np.delete(original, 3))
