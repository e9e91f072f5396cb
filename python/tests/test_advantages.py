# SPDX-License-Identifier: Apache-2.0
"""numpy results equal the C++ core's bit for bit, for every estimator, order, dtype and kind of
group id; out= is written in place; the GIL is released while the core runs."""
import threading

import numpy as np
import pytest

import leap
from conftest import cpp_results, random_batch, same_bits

ORDERS = {
    "default": leap.KernelOrder(),
    "published": leap.KernelOrder.turns_only(),
    "severity_tokens": leap.KernelOrder(by_severity=True, speedup_tolerance=0.05, token_tolerance=0.05,
                                        tokens_only_when_solved=False),
    "no_turn": leap.KernelOrder(by_turn=False, speedup_tolerance=0.0, token_tolerance=-1.0),
    "weighted_speedup": leap.KernelOrder(turn_weight=0.25, speedup_tolerance=0.05),
    "with_speedup_and_tokens": leap.KernelOrder.with_speedup_and_tokens(0.05, 0.0),
}


@pytest.mark.parametrize("order_name", sorted(ORDERS))
@pytest.mark.parametrize("interleaved", [True, False])
def test_numpy_equals_cpp_bit_for_bit(order_name, interleaved):
    order = ORDERS[order_name]
    rng = np.random.default_rng(len(order_name) * 7 + interleaved)
    # Groups from 1 to a few hundred members: every path of the core, groups of one included. The
    # larger batches cross the binding's 4096-row gather slices when contiguous: many slices of
    # groups of 8, slices stretched to the end of groups of 1286, and one group longer than a slice.
    for n, groups in [(4000, 500), (3000, 10), (700, 3), (50, 50), (20000, 2500), (9000, 7), (10000, 1)]:
        batch = random_batch(rng, n, groups, interleaved)
        expected = cpp_results(batch, order, score_tolerance=0.25, epsilon=1e-6)
        args = dict(speedup=batch["speedup"], tokens=batch["tokens"], verdict=batch["verdict"], order=order)
        assert same_bits(leap.rank_advantages(batch["turns"], batch["ids"], **args), expected["rank"])
        out32 = np.empty(n, np.float32)
        assert leap.rank_advantages(batch["turns"], batch["ids"], out=out32, **args) is out32
        assert same_bits(out32, expected["rank_f32"])
        rewards, ids = batch["rewards"], batch["ids"]
        assert same_bits(leap.rank_advantages_of_scores(rewards, ids, 0.25), expected["of_scores"])
        assert same_bits(leap.grpo_advantages(rewards, ids), expected["grpo"])
        assert same_bits(leap.grpo_advantages(rewards, ids, scale_by_std=False), expected["dr_grpo"])
        assert same_bits(leap.rloo_advantages(rewards, ids), expected["rloo"])
        rewards32 = rewards.astype(np.float32)
        assert same_bits(leap.rank_advantages_of_scores(rewards32, ids, 0.25), expected["of_scores_f32"])
        assert same_bits(leap.grpo_advantages(rewards32, ids), expected["grpo_f32"])
        assert same_bits(leap.rloo_advantages(rewards32, ids), expected["rloo_f32"])


def test_every_integer_dtype_and_hashable_ids_give_the_same_groups():
    rng = np.random.default_rng(3)
    batch = random_batch(rng, 2000, 40)
    ids = batch["ids"].astype(np.int64)
    expected = leap.rank_advantages(batch["turns"], batch["ids"], speedup=batch["speedup"])
    variants = [ids.astype(dtype) for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64)]
    variants += [ids - 20,                                   # negative ids: renumbered by value
                 ids * (2 ** 40) + 12345,                    # 64-bit ids beyond uint32
                 (ids.astype(np.uint64) * np.uint64(2 ** 58)),
                 np.array([f"uid-{i}" for i in ids], dtype=object),   # verl's uid strings
                 np.array([f"uid-{i}" for i in ids]),                 # fixed-width strings
                 np.array([("task", int(i)) for i in ids] + [None], dtype=object)[:-1],  # any hashable
                 list(ids)]
    for variant in variants:
        got = leap.rank_advantages(batch["turns"].astype(np.int64), variant, speedup=batch["speedup"])
        assert same_bits(got, expected), variant.dtype if hasattr(variant, "dtype") else type(variant)
    dense = leap.dense_group_ids(np.array(["b", "a", "b", None], dtype=object))
    assert dense.dtype == np.uint32 and list(dense) == [0, 1, 0, 2]


def test_float32_speedups_are_widened_exactly():
    rng = np.random.default_rng(8)
    batch = random_batch(rng, 3000, 100)
    speedup32 = batch["speedup"].astype(np.float32)
    order = leap.KernelOrder.with_speedup(0.05)
    assert same_bits(leap.rank_advantages(batch["turns"], batch["ids"], speedup=speedup32, order=order),
                     leap.rank_advantages(batch["turns"], batch["ids"], speedup=speedup32.astype(np.float64), order=order))


def test_out_is_written_in_place_and_inputs_are_not_copied():
    rng = np.random.default_rng(4)
    batch = random_batch(rng, 1000, 100)
    out = np.full(1000, -7.0)
    returned = leap.grpo_advantages(batch["rewards"], batch["ids"], out=out)
    assert returned is out and not np.any(out == -7.0)
    # Writing through out into the rewards' own buffer works only if the core reads the caller's
    # memory directly: GRPO reads each group before writing it.
    rewards = batch["rewards"].copy()
    expected = leap.grpo_advantages(rewards, batch["ids"])
    leap.grpo_advantages(rewards, batch["ids"], out=rewards)
    assert same_bits(rewards, expected)
    scores = batch["rewards"].copy()
    expected = leap.rank_advantages_of_scores(scores, batch["ids"], 0.25)
    leap.rank_advantages_of_scores(scores, batch["ids"], 0.25, out=scores)
    assert same_bits(scores, expected)
    # A slice with stride 1 of a larger buffer is used in place too.
    big = np.zeros(3000)
    leap.rloo_advantages(batch["rewards"], batch["ids"], out=big[1000:2000])
    assert same_bits(big[1000:2000], leap.rloo_advantages(batch["rewards"], batch["ids"]))
    assert not big[:1000].any() and not big[2000:].any()


def test_published_order_through_scalar_scores():
    rng = np.random.default_rng(5)
    for max_turns in (1, 2, 3, 5):
        turns = rng.integers(0, max_turns + 1, 5000)
        ids = rng.integers(0, 300, 5000)
        scores = np.where(turns > 0, max_turns + 1 - turns, 0).astype(np.float64)
        by_order = leap.rank_advantages(turns, ids, order=leap.KernelOrder.turns_only())
        assert same_bits(leap.rank_advantages_of_scores(scores, ids), by_order)


def test_the_gil_is_released_while_the_core_runs():
    rng = np.random.default_rng(6)
    n = 1 << 21
    turns = rng.integers(0, 4, n).astype(np.int32)
    speedup = rng.lognormal(0.0, 0.6, n)
    ids = np.repeat(np.arange(n // 1024, dtype=np.uint32), 1024)  # large groups: the slow path
    done = threading.Event()
    ticks = 0

    def rank():
        leap.rank_advantages(turns, ids, speedup=speedup)
        done.set()

    worker = threading.Thread(target=rank)
    worker.start()
    while not done.is_set():  # this thread runs Python only while the worker has let go of the GIL
        ticks += 1
    worker.join()
    assert ticks > 10000, f"only {ticks} iterations of the main thread while the core ran"


def test_gates_scalar_and_batched():
    gate = leap.FailBandGate.leap_default(8)
    assert (gate.t_min, gate.t_max) == (4, 7)
    fails = np.arange(9)
    decisions = gate.decide_batch(fails, 8)
    expected = [gate.decide(int(f), 8) for f in fails]
    assert [leap.Expansion(int(d)) for d in decisions] == expected
    assert expected[:4] == [leap.Expansion.prune_easy] * 4
    assert expected[4:8] == [leap.Expansion.expand] * 4
    assert expected[8] == leap.Expansion.prune_catastrophic
    sizes = np.array([8, 8, 4, 2], dtype=np.int64)
    # The band is absolute: 2 failures in a group of 2 are still below t_min = 4.
    assert list(gate.decide_batch(np.array([0, 5, 4, 2]), sizes)) == [1, 0, 0, 1]
    stats = leap.group_stats([leap.Verdict.correct] * 3 + [leap.Verdict.compile_error] * 5)
    assert stats.n_fail == 5 and gate.decide(stats) == leap.Expansion.expand
    assert gate.assess(stats) == (leap.Expansion.expand, leap.GateReason.in_band)


def test_turn_credit_and_references():
    assert list(leap.turn_advantages(1.0, 3, 2, 0.5)) == [0.5, 1.0, 0.0]
    assert list(leap.turn_advantages(-0.5, 3, 0, 0.9)) == [-0.5] * 3
    group = [leap.Outcome(solved_turn=1, speedup=1.0), leap.Outcome(solved_turn=2), leap.Outcome()]
    assert leap.rank_advantages_reference(group, leap.KernelOrder.turns_only()) == [1.0, 0.0, -1.0]
    assert leap.rank_advantages_of_scores_reference([3.0, 2.0, 0.0]) == [1.0, 0.0, -1.0]
    assert leap.KernelOrder.turns_only().compare(group[0], group[1]) == 1
