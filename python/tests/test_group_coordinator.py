# SPDX-License-Identifier: Apache-2.0
"""leap.GroupCoordinator: samples of one group, each in its own episode, get one decision from the C++
gate on the whole group; what happens when members are missing (timeout: the members present, or the
fallback; late members get the same decision); members on two threads' event loops; misuse."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

import leap
from leap import Expansion, GateDecision, GateReason, Verdict

C, W = Verdict.correct, Verdict.wrong_answer


async def report(coordinator: leap.GroupCoordinator, group: object, verdicts: list[Verdict],
                 samples: list[int] | None = None) -> list[GateDecision]:
    indices = list(range(len(verdicts))) if samples is None else samples
    return list(await asyncio.gather(*(coordinator.decide(group, s, v) for s, v in zip(indices, verdicts))))


def test_the_whole_group_gets_the_gates_decision() -> None:
    coordinator = leap.GroupCoordinator(4)  # DCP: FailBandGate.leap_default(4), band [2, 3]
    band = leap.FailBandGate.leap_default(4)
    for verdicts in ([C, C, C, W], [C, W, W, Verdict.compile_error], [W, W, W, W]):
        decisions = asyncio.run(report(coordinator, ("uid", tuple(verdicts)), verdicts))
        expected = GateDecision(*band.assess(leap.group_stats(verdicts)))
        assert decisions == [expected] * 4
    assert coordinator.pending_groups() == 0 and coordinator.timed_out == 0


def test_a_group_waits_for_its_last_member() -> None:
    async def scenario() -> tuple[bool, list[GateDecision]]:
        coordinator = leap.GroupCoordinator(3, leap.AlwaysExpand())
        early = asyncio.ensure_future(report(coordinator, "g", [W, W], [0, 1]))
        await asyncio.sleep(0.05)
        waited = not early.done() and coordinator.pending_groups() == 1
        last = await coordinator.decide("g", 2, C)
        return waited, await early + [last]

    waited, decisions = asyncio.run(scenario())
    assert waited
    assert decisions == [GateDecision(Expansion.expand, GateReason.always_expand)] * 3


def test_a_timeout_decides_on_the_members_present_and_late_members_agree() -> None:
    async def scenario() -> tuple[list[GateDecision], GateDecision, float]:
        coordinator = leap.GroupCoordinator(4, timeout=0.1)
        start = time.monotonic()
        present = await report(coordinator, "g", [C, W, W], [0, 1, 3])
        elapsed = time.monotonic() - start
        assert coordinator.timed_out == 1
        late = await coordinator.decide("g", 2, C)
        return present, late, elapsed

    present, late, elapsed = asyncio.run(scenario())
    # Three members, two failures: DCP's band for G = 4 is [2, 3], so the partial group expands.
    band = leap.FailBandGate.leap_default(4)
    assert present == [GateDecision(*band.assess(leap.group_stats([C, W, W])))] * 3
    assert present[0].expands and late == present[0]
    assert elapsed >= 0.1


def test_a_timeout_with_a_fallback() -> None:
    fallback = GateDecision(Expansion.prune_budget, GateReason.never_expand)
    coordinator = leap.GroupCoordinator(4, timeout=0.05, fallback=fallback)
    assert asyncio.run(report(coordinator, "g", [W, W], [0, 1])) == [fallback, fallback]


def test_members_on_two_threads_loops() -> None:
    coordinator = leap.GroupCoordinator(4, leap.FailBandGate(1, 3))
    results: dict[int, list[GateDecision]] = {}

    def worker(index: int, samples: list[int], verdicts: list[Verdict]) -> None:
        results[index] = asyncio.run(report(coordinator, "split", verdicts, samples))

    threads = [threading.Thread(target=worker, args=(0, [0, 2], [C, W])),
               threading.Thread(target=worker, args=(1, [1, 3], [W, C]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    expected = GateDecision(Expansion.expand, GateReason.in_band)
    assert results == {0: [expected] * 2, 1: [expected] * 2}


def test_a_tracker_observes_each_group_once() -> None:
    tracker = leap.DifficultyTracker()
    coordinator = leap.GroupCoordinator(4, tracker)

    async def one_group() -> list[GateDecision]:
        return list(await asyncio.gather(*(coordinator.decide("g", s, v, task_id=9)
                                           for s, v in enumerate([C, W, W, W]))))

    asyncio.run(one_group())
    assert tracker.fail_rate(9) == 0.75 and len(tracker) == 1


def test_a_group_id_is_free_again_once_every_member_has_its_decision() -> None:
    coordinator = leap.GroupCoordinator(2, leap.FailBandGate(1, 1))
    first = asyncio.run(report(coordinator, "uid", [C, W]))
    second = asyncio.run(report(coordinator, "uid", [C, C]))
    assert first[0].expansion == Expansion.expand and second[0].expansion == Expansion.prune_easy


def test_misuse() -> None:
    with pytest.raises(ValueError, match="whole step"):
        leap.GroupCoordinator(4, leap.BudgetedGate(leap.FailBandGate(2, 3), max_groups=1))
    with pytest.raises(TypeError, match="is not a gate"):
        leap.GroupCoordinator(4, "dcp")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        leap.GroupCoordinator(4, timeout=0)
    coordinator = leap.GroupCoordinator(2, timeout=0.05)
    with pytest.raises(ValueError, match="must lie in"):
        asyncio.run(coordinator.decide("g", 2, C))

    async def twice() -> None:
        first = asyncio.ensure_future(coordinator.decide("h", 0, C))
        await asyncio.sleep(0)
        try:
            with pytest.raises(ValueError, match="reported twice"):
                await coordinator.decide("h", 0, W)
        finally:
            await first  # decided on the timeout

    asyncio.run(twice())


def test_join_hands_out_each_index_once() -> None:
    coordinator = leap.GroupCoordinator(3)
    assert [coordinator.join("g") for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="has its 3 members already"):
        coordinator.join("g")
    assert coordinator.join("other") == 0


def test_samples_that_do_not_know_their_index() -> None:
    """One episode per sample, given only the group's id (as an agent loop is): join() numbers them."""
    async def policy(task: str, so_far: object, key: leap.SampleKey) -> leap.Completion:
        return leap.Completion("", key.sample)

    async def environment(task: str, completion: leap.Completion, key: leap.SampleKey) -> leap.Evaluation:
        return leap.Evaluation(C if key.sample == 0 else W)

    coordinator = leap.GroupCoordinator(4)

    async def group() -> list[leap.SampleEpisode]:
        return list(await asyncio.gather(*(leap.run_sample_episode("t", policy, environment, coordinator=coordinator,
                                                                    group_id="uid-1", max_turns=2)
                                           for _ in range(4))))

    episodes = asyncio.run(group())
    assert sorted(e.sample for e in episodes) == [0, 1, 2, 3]
    # One success of four: in DCP's band for G = 4, so the three failures get a second turn.
    assert {e.decision for e in episodes} == {GateDecision(Expansion.expand, GateReason.in_band)}
    assert sorted(len(e.turns) for e in episodes) == [1, 2, 2, 2]
    assert coordinator.pending_groups() == 0
