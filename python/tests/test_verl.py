# SPDX-License-Identifier: Apache-2.0
"""leap.verl: verl's estimator signature, checked against a reference implementation of verl's GRPO
formula written here, the rank estimator against leap's own functions, the reward encodings, and the
registration with verl's registry (a stand-in package with verl's module path and decorator)."""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torch

import leap
import leap.verl as lv


def verl_grpo_reference(token_level_rewards, response_mask, index, epsilon=1e-6, norm_adv_by_std_in_grpo=True):
    """verl's GRPO outcome advantage as its documentation states it: the score of a sequence is the
    sum of its token rewards; per uid, mean and unbiased std of the scores (a group of one: mean 0,
    std 1); (score - mean) / (std + epsilon), or score - mean; broadcast over the response mask."""
    scores = token_level_rewards.sum(dim=-1)
    by_uid = {}
    for row, uid in enumerate(index):
        by_uid.setdefault(uid, []).append(row)
    advantages = torch.empty_like(scores)
    for rows in by_uid.values():
        group = scores[rows]
        mean = group.mean() if len(rows) > 1 else torch.tensor(0.0)
        std = group.std() if len(rows) > 1 else torch.tensor(1.0)
        centred = group - mean
        advantages[rows] = centred / (std + epsilon) if norm_adv_by_std_in_grpo else centred
    advantages = advantages.unsqueeze(-1) * response_mask
    return advantages, advantages


def verl_batch(rng, rows=512, length=16, groups=64, singletons=5):
    """Rewards on the last response token (as verl's reward managers place them), random response
    lengths, uid strings in an object array, a few groups of one."""
    lengths = rng.integers(1, length + 1, rows)
    mask = torch.from_numpy((np.arange(length)[None, :] < lengths[:, None]).astype(np.float32))
    rewards = torch.zeros(rows, length)
    outcome = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], rows).astype(np.float32)
    rewards[np.arange(rows), lengths - 1] = torch.from_numpy(outcome)
    uids = [f"uid-{g}" for g in rng.integers(0, groups, rows - singletons)] + [f"alone-{k}" for k in range(singletons)]
    index = np.array(uids, dtype=object)
    return rewards, mask, index, outcome


@pytest.mark.parametrize("norm", [True, False])
def test_leap_grpo_matches_verls_formula(norm):
    rng = np.random.default_rng(1)
    rewards, mask, index, _ = verl_batch(rng)
    got, returns = lv.leap_grpo_advantage(rewards, mask, index, epsilon=1e-6, norm_adv_by_std_in_grpo=norm)
    expected, _ = verl_grpo_reference(rewards, mask, index, 1e-6, norm)
    assert got is returns and got.shape == rewards.shape and got.dtype == torch.float32
    alone = np.array([uid.startswith("alone") for uid in index])
    # Groups of two or more: verl's formula, to float32 rounding (leap computes in double).
    torch.testing.assert_close(got[~alone], expected[~alone], rtol=2e-6, atol=2e-6)
    # The one deliberate difference: a group of one gets 0, where verl gives r / (1 + epsilon).
    assert (got[alone] == 0).all()
    assert (expected[alone].sum(-1) != 0).any()
    # Nothing outside the response mask.
    assert (got[mask == 0] == 0).all()


def test_leap_rank_is_the_rank_of_the_outcome_scores():
    rng = np.random.default_rng(2)
    rewards, mask, index, outcome = verl_batch(rng)
    got, _ = lv.leap_rank_advantage(rewards, mask, index)
    per_sequence = leap.rank_advantages_of_scores(outcome, index)
    assert torch.equal(got, torch.from_numpy(per_sequence).unsqueeze(-1) * mask)
    # Sums to zero in every group, 0 for a group of one, and within [-1, 1].
    for uid in set(index):
        rows = np.flatnonzero(index == uid)
        assert abs(float(per_sequence[rows].sum())) < 1e-5
    assert (np.abs(per_sequence) <= 1).all()
    # A tolerance from verl's algorithm config (attribute or mapping): 0.5 and 1.0 now tie.
    class AlgoConfig:
        leap_score_tolerance = 0.5
    tied, _ = lv.leap_rank_advantage(rewards, mask, index, config=AlgoConfig())
    assert torch.equal(tied, lv.leap_rank_advantage(rewards, mask, index, config={"leap_score_tolerance": 0.5})[0])
    expected_tied = torch.from_numpy(leap.rank_advantages_of_scores(outcome, index, 0.5)).unsqueeze(-1) * mask
    assert torch.equal(tied, expected_tied) and not torch.equal(tied, got)


def test_turn_score_gives_the_published_order_through_verl():
    rng = np.random.default_rng(3)
    rows, max_turns = 400, 3
    turns = rng.integers(0, max_turns + 1, rows)
    groups = rng.integers(0, 50, rows)
    rewards = torch.tensor([[lv.turn_score(int(t), max_turns)] for t in turns])
    mask = torch.ones(rows, 1)
    got, _ = lv.leap_rank_advantage(rewards, mask, groups)
    published = leap.rank_advantages(turns, groups, order=leap.KernelOrder.turns_only())
    assert torch.equal(got[:, 0], torch.from_numpy(published).float())


def test_turn_and_speedup_encoding_follows_the_speedup_band():
    rng = np.random.default_rng(4)
    rows, max_turns = 2000, 3
    turns = rng.integers(0, max_turns + 1, rows)
    speedup = rng.lognormal(0.0, 0.5, rows)
    groups = rng.integers(0, 100, rows)
    scores = np.array([lv.turn_and_speedup_score(int(t), max_turns, float(s)) for t, s in zip(turns, speedup)])
    got = leap.rank_advantages_of_scores(scores, groups, lv.speedup_tolerance(0.05))
    order = leap.KernelOrder(by_turn=True, speedup_tolerance=0.05, token_tolerance=-1.0)
    expected = leap.rank_advantages(turns, groups, speedup=speedup, order=order)
    assert np.array_equal(got, expected)  # continuous speedups: no pair sits on the band's edge
    with pytest.raises(ValueError, match="solved_turn .4. must lie in"):
        lv.turn_score(4, 3)


def test_unknown_speed_never_pays_in_the_encoding_whatever_the_tolerance():
    """Unknown speedups (None, NaN, 0, negative) among known ones: at speedup_tolerance(tol) the scores
    rank as KernelOrder.with_speedup(tol) does, an unknown speedup below every known one of its turn;
    at TURNS_ONLY_TOLERANCE as the published order, every same-turn pair tied, turns apart."""
    rng = np.random.default_rng(5)
    rows, max_turns = 3000, 3
    turns = rng.integers(0, max_turns + 1, rows)
    speedup = rng.lognormal(0.0, 0.7, rows)
    speedup[rng.random(rows) < 0.3] = np.nan
    speedup[rng.random(rows) < 0.05] = 0.0
    speedup[rng.random(rows) < 0.05] = -1.0
    speedup[rng.random(rows) < 0.02] = np.inf
    groups = rng.integers(0, 150, rows)
    scores = np.array([lv.turn_and_speedup_score(int(t), max_turns, float(s)) for t, s in zip(turns, speedup)])
    for tolerance in (0.0, 0.05, 0.5):
        got = leap.rank_advantages_of_scores(scores, groups, lv.speedup_tolerance(tolerance))
        clamped = np.where(np.nan_to_num(speedup) > 0, np.minimum(speedup, math.exp(8)), speedup)  # clamped at e^8
        expected = leap.rank_advantages(turns, groups, speedup=clamped, order=leap.KernelOrder.with_speedup(tolerance))
        assert np.array_equal(got, expected), tolerance
    turns_only = leap.rank_advantages_of_scores(scores, groups, lv.TURNS_ONLY_TOLERANCE)
    assert np.array_equal(turns_only, leap.rank_advantages(turns, groups, order=leap.KernelOrder.turns_only()))
    # The arithmetic behind it: one turn's scores at most 24 apart, different turns at least 40.
    for t in range(1, max_turns + 1):
        same = [lv.turn_and_speedup_score(t, max_turns, s) for s in (None, math.exp(-9), 1.0, math.exp(9))]
        assert max(same) - min(same) == 24
        if t < max_turns:
            later = [lv.turn_and_speedup_score(t + 1, max_turns, s) for s in (None, math.exp(-9), math.exp(9))]
            assert min(same) - max(later) == 40
    assert min(lv.turn_and_speedup_score(max_turns, max_turns, s) for s in (None, math.nan, 0.0)) - 0.0 == 48
    assert lv.turn_and_speedup_score(1, 1, None) == lv.turn_and_speedup_score(1, 1, math.nan) \
        == lv.turn_and_speedup_score(1, 1, 0.0) == lv.turn_and_speedup_score(1, 1, -3.0) == 48.0
    with pytest.raises(ValueError, match="would tie an unknown speedup with known ones"):
        lv.speedup_tolerance(3000.0)
    assert lv.speedup_tolerance(2900.0) < 8


def test_a_masked_row_is_left_out_of_its_group_not_ranked_as_a_failure():
    # Group a: a sample whose environment failed (the agent loop gives it score 0 and a response_mask of 0),
    # one solved at turn 1, two failures; group b: a NaN score (a reward function that could not score it).
    scores = [0.0, 192.0, 0.0, 0.0, math.nan, 128.0, 0.0]
    index = np.array(["a", "a", "a", "a", "b", "b", "b"], dtype=object)
    rewards = torch.zeros(7, 4)
    rewards[:, 3] = torch.tensor(scores)
    mask = torch.ones(7, 4)
    mask[0] = 0
    rank, _ = lv.leap_rank_advantage(rewards, mask, index)
    # Ranked among the judged members: (wins - losses) / (G' - 1); the masked rows get 0.
    assert rank[:, 3].tolist() == [0.0, 1.0, -0.5, -0.5, 0.0, 1.0, -1.0]
    assert torch.isfinite(rank).all() and (rank[mask == 0] == 0).all()
    grpo, _ = lv.leap_grpo_advantage(rewards, mask, index, norm_adv_by_std_in_grpo=False)
    assert grpo[:, 0].tolist() == pytest.approx([0.0, 128.0, -64.0, -64.0, 0.0, 64.0, -64.0])


def test_estimators_take_cuda_like_devices_and_bad_shapes_are_errors():
    rewards = torch.zeros(4, 3)
    with pytest.raises(ValueError, match="index has 3 uids but token_level_rewards has 4 rows"):
        lv.leap_grpo_advantage(rewards, torch.ones(4, 3), np.array(["a", "a", "b"], dtype=object))
    with pytest.raises(ValueError, match="token_level_rewards must be .batch, response_length."):
        lv.leap_rank_advantage(torch.zeros(4), torch.ones(4), np.zeros(4))


FAKE_VERL = textwrap.dedent('''
    # verl's registry as its core_algos module exposes it: register_adv_est(name) -> decorator.
    ADV_ESTIMATOR_REGISTRY = {}
    def register_adv_est(name_or_enum):
        def decorator(fn):
            name = getattr(name_or_enum, "value", name_or_enum)
            if name in ADV_ESTIMATOR_REGISTRY and ADV_ESTIMATOR_REGISTRY[name] != fn:
                raise ValueError(f"Adv estimator {name} has been registered")
            ADV_ESTIMATOR_REGISTRY[name] = fn
            return fn
        return decorator
    def get_adv_estimator_fn(name):
        return ADV_ESTIMATOR_REGISTRY[name]
''')


def test_registers_with_verls_registry_when_verl_is_importable(tmp_path):
    package = tmp_path / "verl" / "trainer" / "ppo"
    package.mkdir(parents=True)
    for directory in (tmp_path / "verl", tmp_path / "verl" / "trainer", package):
        (directory / "__init__.py").write_text("")
    (package / "core_algos.py").write_text(FAKE_VERL)
    program = textwrap.dedent('''
        import numpy as np, torch
        import leap.verl
        from verl.trainer.ppo import core_algos
        assert leap.verl.registered == ("leap_rank", "leap_grpo"), leap.verl.registered
        fn = core_algos.get_adv_estimator_fn("leap_grpo")
        assert fn is leap.verl.leap_grpo_advantage
        assert core_algos.get_adv_estimator_fn("leap_rank") is leap.verl.leap_rank_advantage
        # Called as verl's trainer calls an estimator: keywords only.
        adv, ret = fn(token_level_rewards=torch.tensor([[1.0], [0.0]]), response_mask=torch.ones(2, 1),
                      index=np.array(["u", "u"], dtype=object), config=None)
        assert adv[0, 0] > 0 > adv[1, 0]
        print("registered")
    ''')
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True, text=True)
    assert run.returncode == 0 and "registered" in run.stdout, run.stderr


def test_without_verl_nothing_is_registered_and_the_functions_work():
    try:
        import verl  # noqa: F401
        pytest.skip("verl is installed here")
    except ImportError:
        pass
    assert lv.registered == ()
    assert set(lv.ESTIMATORS) == {"leap_rank", "leap_grpo"}
