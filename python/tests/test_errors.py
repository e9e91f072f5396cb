# SPDX-License-Identifier: Apache-2.0
"""Every bad input raises a clear error that names the argument, and writes nothing."""
import numpy as np
import pytest

import leap

N = 6
TURNS = np.array([1, 0, 2, 1, 0, 3], dtype=np.int32)
IDS = np.array([0, 0, 0, 1, 1, 1], dtype=np.uint32)
REWARDS = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 0.25])


def fresh_out(dtype=np.float64):
    return np.full(N, -7.0, dtype=dtype)


CASES = [
    # (call taking out, exception, message fragment)
    (lambda out: leap.rank_advantages(TURNS.astype(np.float64), IDS, out=out), ValueError, "solved_turn has dtype float64"),
    (lambda out: leap.rank_advantages(TURNS[::2], IDS[:3], out=out[:3]), ValueError, "solved_turn is not contiguous"),
    (lambda out: leap.rank_advantages(TURNS, IDS[:5], out=out), ValueError, "group_ids has 5 elements but solved_turn has 6"),
    (lambda out: leap.rank_advantages(np.array([1, 0, -1, 1, 0, 3]), IDS, out=out), ValueError, "solved_turn[2] is -1"),
    (lambda out: leap.rank_advantages(TURNS.reshape(2, 3), IDS, out=out), ValueError, "must be one-dimensional"),
    (lambda out: leap.rank_advantages(TURNS, IDS, speedup=np.ones(5), out=out), ValueError, "speedup has 5 elements"),
    (lambda out: leap.rank_advantages(TURNS, IDS, speedup=np.ones(N, np.int64), out=out), ValueError, "speedup has dtype int64"),
    (lambda out: leap.rank_advantages(TURNS, IDS, tokens=np.array([1, 2, 3, -4, 5, 6]), out=out), ValueError, "tokens[3] is -4"),
    (lambda out: leap.rank_advantages(TURNS, IDS, verdict=np.array([4, 0, 4, 4, 9, 4]), out=out), ValueError, "verdict[4] is 9"),
    (lambda out: leap.rank_advantages(TURNS, IDS, order=leap.KernelOrder(speedup_tolerance=float("nan")), out=out),
     ValueError, "speedup_tolerance is NaN"),
    (lambda out: leap.rank_advantages(TURNS, IDS.astype(np.float32), out=out), ValueError, "group_ids has dtype float"),
    (lambda out: leap.rank_advantages(TURNS, np.array([[1], [2], 3, 4, 5, 6], dtype=object), out=out), ValueError,
     "hashable"),
    (lambda out: leap.rank_advantages(TURNS.astype(">i4"), IDS, out=out), ValueError, "solved_turn has dtype >i4"),
    (lambda out: leap.rank_advantages_of_scores(REWARDS, IDS, float("nan"), out=out), ValueError, "tolerance (nan)"),
    (lambda out: leap.rank_advantages_of_scores(REWARDS, IDS, -1.0, out=out), ValueError, "must be >= 0"),
    (lambda out: leap.rank_advantages_of_scores(np.array([1.0, np.nan, 0, 0, 0, 0]), IDS, out=out), ValueError,
     "scores[1] (nan) is not finite"),
    (lambda out: leap.rank_advantages_of_scores(REWARDS.astype(np.float16), IDS, out=out), ValueError,
     "scores has dtype float16"),
    (lambda out: leap.grpo_advantages(REWARDS, IDS, epsilon=-1.0, out=out), ValueError, "epsilon (-1)"),
    (lambda out: leap.grpo_advantages(np.array([1.0, 0, 0, np.inf, 0, 0]), IDS, out=out), ValueError,
     "rewards[3] (inf) is not finite"),
    (lambda out: leap.rloo_advantages(REWARDS[:5], IDS, out=out), ValueError, "group_ids has 6 elements but rewards has 5"),
    (lambda out: leap.rloo_advantages(REWARDS, IDS, out=out[:4]), ValueError, "out has 4 elements; expected 6"),
    (lambda out: leap.grpo_advantages(REWARDS, IDS, out=out[::2].repeat(2)[:0]), ValueError, "out has 0 elements"),
    (lambda out: leap.rank_advantages(TURNS, IDS, out=np.zeros(N, np.int64)), ValueError, "out has dtype int64"),
    (lambda out: leap.grpo_advantages(REWARDS, IDS, out=np.zeros(N, np.float32)), ValueError,
     "out has dtype float32 but rewards has float64"),
    (lambda out: leap.rank_advantages(TURNS, IDS, out=[0.0] * N), TypeError, "out must be a numpy array"),
    (lambda out: leap.rank_advantages("123456", IDS, out=out), TypeError, "solved_turn must be a numpy array"),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_bad_input_raises_and_writes_nothing(case):
    call, exception, fragment = CASES[case]
    out = fresh_out()
    with pytest.raises(exception) as error:
        call(out)
    assert fragment in str(error.value), str(error.value)
    assert (out == -7.0).all(), "something was written before the error"


def test_read_only_and_strided_out_are_refused():
    out = fresh_out()
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        leap.grpo_advantages(REWARDS, IDS, out=out)
    wide = np.full(2 * N, -7.0)
    with pytest.raises(ValueError, match="out is not contiguous"):
        leap.grpo_advantages(REWARDS, IDS, out=wide[::2])
    assert (wide == -7.0).all()


def test_bad_settings_of_types():
    with pytest.raises(TypeError, match="has no field 'speedup_tol'"):
        leap.KernelOrder(speedup_tol=0.1)
    with pytest.raises(ValueError, match="t_min .5. > t_max .3. \\+ 1"):
        leap.FailBandGate(5, 3)
    with pytest.raises(ValueError, match="group_size .0. must be >= 1"):
        leap.FailBandGate.leap_default(0)
    gate = leap.FailBandGate(4, 7)
    with pytest.raises(ValueError, match="fails .9. must lie in"):
        gate.decide(9, 8)
    with pytest.raises(ValueError, match=r"fails\[1\] \(9\) must lie in"):
        gate.decide_batch(np.array([1, 9]), 8)
    with pytest.raises(ValueError, match="solved_turn .3. > num_turns .2."):
        leap.turn_advantages(1.0, 2, 3, 0.9)
    with pytest.raises(ValueError, match="gamma"):
        leap.turn_advantages(1.0, 2, 1, 1.5)
