# SPDX-License-Identifier: Apache-2.0
"""leap.run_episodes' contract beyond the numbers: the schedule of turns and what the policy sees, the
caller's concurrency bound, failures as turns, cancellation, misuse refused before any call, and the
per-sample path (run_sample_episode + GroupCoordinator) giving the batch runner's episodes."""
from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import pytest

import leap
from leap import Completion, Evaluation, Expansion, GateDecision, GateReason, SampleKey, Turn, Verdict


class Script:
    """A policy and environment: sample s of task t is correct at turn 1 + (s + t) % 4 (4 = never within 3
    turns); each call is counted, and the policy records the feedback it was shown."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.shown: dict[tuple[int, int, int], str] = {}
        self.delay = delay

    async def policy(self, task: int, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(self.delay)
        self.in_flight -= 1
        assert len(so_far) == key.turn - 1
        self.shown[(task, key.sample, key.turn)] = so_far[-1].feedback if so_far else ""
        return Completion(f"attempt {key.turn}", 10 * key.turn)

    async def environment(self, task: int, completion: Completion, key: SampleKey) -> Evaluation:
        solved = key.turn == 1 + (key.sample + task) % 4
        return Evaluation(Verdict.correct if solved else Verdict.wrong_answer, 1.5 if solved else math.nan,
                          f"feedback on {completion.text}")


def run(tasks: Sequence[int], script: Script, **options: Any) -> leap.EpisodeBatch:
    return asyncio.run(leap.run_episodes(tasks, script.policy, script.environment, **options))


def test_turns_feedback_and_decisions() -> None:
    script = Script()
    batch = run(range(6), script, group_size=4, max_turns=3)
    band = leap.FailBandGate.leap_default(4)
    for group in batch.groups:
        # Every group has 1 turn-1 success of 4: in DCP's band [2, 3], so every group expands.
        assert group.stats == leap.GroupStats(size=4, n_correct=1, n_wrong_answer=3)
        assert group.decision == GateDecision(*band.assess(group.stats))
    for episode in batch.samples:
        solve_at = 1 + (episode.sample + episode.task_index) % 4
        assert len(episode.turns) == min(solve_at, 3)
        assert episode.outcome.solved_turn == (solve_at if solve_at <= 3 else 0)
        for turn in range(2, len(episode.turns) + 1):
            assert script.shown[(episode.task_index, episode.sample, turn)] == f"feedback on attempt {turn - 1}"
        assert episode.turn_advantages == list(leap.turn_advantages(episode.advantage, len(episode.turns),
                                                                    episode.outcome.solved_turn, 1.0))
    assert script.calls == batch.metrics.evaluations == sum(len(e.turns) for e in batch.samples)
    assert list(batch.metrics.evaluations_per_turn) == [24, 18, 12]
    # The advantages are the rank advantages of each group's outcomes (the published order).
    for t in range(6):
        members = batch.samples[4 * t:4 * t + 4]
        assert leap.rank_advantages_reference([e.outcome for e in members]) == [e.advantage for e in members]


def test_pruned_groups_stay_single_turn() -> None:
    batch = run(range(4), Script(), group_size=4, max_turns=3, gate=leap.NeverExpand())
    assert all(len(e.turns) == 1 for e in batch.samples)
    assert {g.decision for g in batch.groups} == {GateDecision(Expansion.prune_budget, GateReason.never_expand)}
    assert batch.metrics.groups(Expansion.prune_budget) == 4


def test_the_callers_bound_on_concurrency() -> None:
    script = Script(delay=0.002)
    batch = run(range(8), script, group_size=4, max_turns=3, max_concurrency=5)
    assert script.most_in_flight == 5
    assert script.calls == batch.metrics.evaluations
    unbounded = Script(delay=0.002)
    run(range(8), unbounded, group_size=4, max_turns=3)
    assert unbounded.most_in_flight == 32  # turn 1 of every sample at once


def test_a_wrong_return_type_is_a_failed_turn() -> None:
    async def policy(task: int, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        return "not a completion"  # type: ignore[return-value]  # the mistake under test

    async def environment(task: int, completion: Completion, key: SampleKey) -> Evaluation:
        raise AssertionError("the environment is not called for a failed completion")

    batch = asyncio.run(leap.run_episodes([0], policy, environment, group_size=2, max_turns=2,
                                          gate=leap.AlwaysExpand()))
    assert batch.metrics.policy_errors == 4 and batch.metrics.environment_errors == 0
    turn = batch.samples[0].turns[0]
    assert turn.error == "policy" and turn.verdict == Verdict.runtime_error and turn.completion is None
    assert "expected leap.episode.Completion" in turn.feedback


def test_a_malformed_evaluation_is_an_environment_failure() -> None:
    async def environment(task: int, completion: Completion, key: SampleKey) -> Evaluation:
        return Evaluation(Verdict.correct, None, "fine")  # type: ignore[arg-type]  # the mistake under test

    batch = asyncio.run(leap.run_episodes([0], Script().policy, environment, group_size=2, max_turns=1))
    assert batch.metrics.environment_errors == 4  # two samples, each tried twice
    assert batch.metrics.masked_trajectories == 2
    turn = batch.samples[1].turns[0]
    assert turn.error == "environment" and turn.environment_failure and batch.samples[1].masked
    assert "speedup (None) is not a number" in turn.feedback and turn.completion is not None


def test_cancellation_propagates() -> None:
    async def policy(task: int, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        raise asyncio.CancelledError()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(leap.run_episodes([0], policy, Script().environment, group_size=2))


@pytest.mark.parametrize("options, error, match", [
    ({"group_size": 0}, ValueError, "group_size"),
    ({"max_turns": 0}, ValueError, "max_turns"),
    ({"gamma": 1.5}, ValueError, "gamma"),
    ({"seed": -1}, ValueError, "seed"),
    ({"max_concurrency": 0}, ValueError, "max_concurrency"),
    ({"task_ids": [1, 2]}, ValueError, "task_ids"),
    ({"gate": "dcp"}, TypeError, "is not a gate"),
    ({"order": leap.KernelOrder(speedup_tolerance=math.nan)}, ValueError, "NaN"),
])
def test_misuse_raises_before_any_call(options: dict[str, Any], error: type[Exception], match: str) -> None:
    script = Script()
    with pytest.raises(error, match=match):
        run(range(3), script, **options)
    assert script.calls == 0


def test_a_policy_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match="policy"):
        asyncio.run(leap.run_episodes([0], "policy", Script().environment))  # type: ignore[arg-type]


def test_per_sample_episodes_are_the_batch_runners() -> None:
    tasks = list(range(10))
    batch = run(tasks, Script(), group_size=4, max_turns=3, seed=11, step=2)
    coordinator = leap.GroupCoordinator(4)
    script = Script()

    async def every_sample() -> list[leap.SampleEpisode]:
        return await asyncio.gather(*(
            leap.run_sample_episode(t, script.policy, script.environment, sample=s, task_index=t,
                                    coordinator=coordinator, max_turns=3, seed=11, step=2)
            for t in tasks for s in range(4)))

    episodes = asyncio.run(every_sample())
    assert coordinator.pending_groups() == 0
    for alone, together in zip(episodes, batch.samples):
        assert alone.decision == together.decision
        assert alone.outcome == together.outcome
        assert [(t.verdict, t.tokens, t.feedback) for t in alone.turns] == \
               [(t.verdict, t.tokens, t.feedback) for t in together.turns]
    # What the per-sample path leaves to the trainer: the group's advantages from the outcomes.
    for t in tasks:
        group = episodes[4 * t:4 * t + 4]
        assert leap.rank_advantages_reference([e.outcome for e in group]) == batch.advantages[4 * t:4 * t + 4]


def test_keys_and_seeds_are_run_steps() -> None:
    keys: list[SampleKey] = []

    async def policy(task: int, so_far: Sequence[Turn], key: SampleKey) -> Completion:
        keys.append(key)
        return Completion("")

    async def environment(task: int, completion: Completion, key: SampleKey) -> Evaluation:
        return Evaluation(Verdict.compile_error)

    asyncio.run(leap.run_episodes([0, 1], policy, environment, group_size=2, max_turns=2, gate=leap.AlwaysExpand(),
                                  seed=7, step=3, task_ids=[40, 41]))
    assert sorted(keys) == sorted(leap.sample_key(t, s, turn, task_id=40 + t, step=3, seed=7)
                                  for t in range(2) for s in range(2) for turn in (1, 2))
    assert len({k.seed for k in keys}) == 8


def test_the_replay_refuses_a_schedule_run_step_would_not_run() -> None:
    """The numbers come from run_step over the recorded turns, which checks it asked for exactly those."""
    prune = GateDecision(Expansion.prune_easy, GateReason.too_few_failures)
    expand = GateDecision(Expansion.expand, GateReason.in_band)
    wrong, correct = int(Verdict.wrong_answer), int(Verdict.correct)

    def replay(decision: GateDecision, num_turns: list[int], verdicts: list[int]) -> object:
        n = len(verdicts)
        return leap._core._replay_step([0], 2, 3, 1.0, 0, 0, [decision], num_turns, verdicts, [math.nan] * n,
                                       [1] * n, [0] * n, [0] * n, leap.KernelOrder(),
                                       leap.AdvantageNormalization.none, 1e-6, 0.0, [0] * n, 1)

    replay(expand, [2, 1], [wrong, correct, correct])  # sample 0 repaired at turn 2: what run_step runs
    with pytest.raises(RuntimeError, match="ran 2 turns of trajectory 0 where run_step runs 1"):
        replay(prune, [2, 1], [wrong, correct, correct])  # a second turn in a pruned group
    with pytest.raises(RuntimeError, match="asks for turn 2 of trajectory 0, which the episode runner did not run"):
        replay(expand, [1, 1], [wrong, correct])  # an expanded failure left at one turn
    # A masked turn has used every retry; a judged one at most all of them.
    with pytest.raises(ValueError, match=r"retries\[0\] \(0\) does not fit errors\[0\] \(2\)"):
        leap._core._replay_step([0], 2, 3, 1.0, 0, 0, [prune], [1, 1], [wrong, correct], [math.nan] * 2, [1] * 2,
                                [0] * 2, [2, 0], leap.KernelOrder(), leap.AdvantageNormalization.none, 1e-6, 0.0,
                                [0, 0], 1)


# ---- environment failures: never the candidate's failure ------------------------------------------------

class FailingEnvironment:
    """Script's environment, except that it cannot judge the samples in `lost` (task, sample, turn) on their
    first `attempts` attempts, failing the way `kind` says: a dead letter (a reported environment failure),
    an unavailable sandbox (leap.environment.NoVerdict raised) or a request timed out in transit."""

    def __init__(self, lost: set[tuple[int, int, int]], kind: str = "dead_lettered", attempts: int = 1 << 20) -> None:
        self.script, self.lost, self.kind, self.attempts = Script(), lost, kind, attempts
        self.keys: list[SampleKey] = []

    async def __call__(self, task: int, completion: Completion, key: SampleKey) -> Evaluation:
        self.keys.append(key)
        if (task, key.sample, key.turn) in self.lost and key.attempt < self.attempts:
            if self.kind == "dead_lettered":
                return Evaluation.environment_failed("fleet request 9: dead-lettered after 3 deliveries")
            if self.kind == "unavailable":
                from leap.environment import NoVerdict
                raise NoVerdict("The kernel compiles. It was not run: no GPU is available.")
            raise TimeoutError("request 9 on leap:requests got no answer before its deadline")
        return await self.script.environment(task, completion, key)


@pytest.mark.parametrize("kind", ["dead_lettered", "unavailable", "timed_out"])
def test_an_environment_failure_is_not_ranked_as_the_candidates_runtime_error(kind: str) -> None:
    # Task 0: sample s is correct at turn 1 + s % 4. Sample 0, correct at turn 1, is never judged: ranked as a
    # runtime_error it would lose to every member that solved; masked, it is left out of the rank.
    environment = FailingEnvironment({(0, 0, 1)}, kind)
    script = environment.script
    batch = asyncio.run(leap.run_episodes([0], script.policy, environment, group_size=4, max_turns=3))
    lost = batch.samples[0]
    assert lost.masked and len(lost.turns) == 1 and lost.turns[0].environment_failure
    assert lost.turns[0].retries == 1 and "(attempt 2 of 2; the sample is masked)" in lost.turns[0].feedback
    assert lost.advantage == 0.0 and lost.turn_advantages == [0.0]
    assert batch.masks == [True, False, False, False]
    judged = batch.samples[1:]
    assert [e.advantage for e in judged] == leap.rank_advantages_reference([e.outcome for e in judged])
    assert [e.advantage for e in judged] == [1.0, 0.0, -1.0]  # solved at 2, solved at 3, never: (G' - 1) = 2
    # The gate counted the three judged members only: three turn-1 failures.
    assert batch.groups[0].stats == leap.GroupStats(size=3, n_wrong_answer=3)
    m = batch.metrics
    assert (m.environment_errors, m.environment_retries, m.masked_trajectories) == (2, 1, 1)
    assert m.accuracy_at_turn == [0.0, 1 / 3, 2 / 3]
    assert script.calls == m.evaluations  # the policy was not asked again for the retry


def test_an_environment_failure_is_retried_and_the_retry_judges() -> None:
    environment = FailingEnvironment({(0, 0, 1)}, "timed_out", attempts=1)
    script = environment.script
    batch = asyncio.run(leap.run_episodes([0], script.policy, environment, group_size=4, max_turns=3))
    clean = run([0], Script(), group_size=4, max_turns=3)
    assert not any(batch.masks)
    assert batch.advantages == clean.advantages and batch.samples[0].outcome.solved_turn == 1
    assert batch.samples[0].turns[0].retries == 1
    assert [k.attempt for k in environment.keys if (k.sample, k.turn) == (0, 1)] == [0, 1]
    assert (batch.metrics.environment_errors, batch.metrics.environment_retries,
            batch.metrics.masked_trajectories) == (1, 1, 0)


def test_environment_retries_bounds_the_attempts() -> None:
    for retries, masked in ((0, True), (2, True), (3, False)):
        environment = FailingEnvironment({(0, 0, 1)}, "dead_lettered", attempts=3)
        batch = asyncio.run(leap.run_episodes([0], environment.script.policy, environment, group_size=4,
                                              environment_retries=retries))
        assert batch.samples[0].masked == masked
        assert batch.metrics.environment_retries == min(retries, 3)
    for bad in (-1, 17, True, 1.0):
        with pytest.raises(ValueError, match="environment_retries"):
            run([0], Script(), environment_retries=bad)


def test_environment_failures_at_turn_1_do_not_count_in_the_gate() -> None:
    # Task 3: sample 1 is correct at turn 1, the others are not. Samples 0, 2 and 3 are never judged: counted
    # as three failures they would put the group in DCP's band and buy debugging turns; left out, the one
    # judged member succeeded and the group is easy.
    environment = FailingEnvironment({(3, 0, 1), (3, 2, 1), (3, 3, 1)})
    batch = asyncio.run(leap.run_episodes([3], environment.script.policy, environment, group_size=4))
    assert batch.groups[0].stats == leap.GroupStats(size=1, n_correct=1)
    assert batch.groups[0].decision == GateDecision(Expansion.prune_easy, GateReason.too_few_failures)
    assert batch.advantages == [0.0, 0.0, 0.0, 0.0]  # a group with one judged member: 0
    assert batch.metrics.masked_trajectories == 3


def test_a_masked_feedback_turn_ends_the_sample() -> None:
    environment = FailingEnvironment({(0, 1, 2)})  # sample 1 fails turn 1 and is lost at turn 2
    batch = asyncio.run(leap.run_episodes([0], environment.script.policy, environment, group_size=4, max_turns=3))
    episode = batch.samples[1]
    assert [t.environment_failure for t in episode.turns] == [False, True]
    assert episode.masked and episode.turn_advantages == [0.0, 0.0]
    assert episode.outcome.solved_turn == 0 and episode.outcome.best_verdict == Verdict.wrong_answer
    assert batch.groups[0].stats.size == 4
    assert [e.advantage for e in batch.samples] == [1.0, 0.0, 0.0, -1.0]


def test_per_sample_episodes_mask_as_the_batch_runner_does() -> None:
    lost = {(t, s, 1) for t in range(6) for s in range(4) if (t + s) % 5 == 0} | {(2, 1, 2)}
    batch_environment = FailingEnvironment(lost)
    batch = asyncio.run(leap.run_episodes(range(6), batch_environment.script.policy, batch_environment,
                                          group_size=4, max_turns=3))
    coordinator = leap.GroupCoordinator(4)
    environment = FailingEnvironment(lost)

    async def every_sample() -> list[leap.SampleEpisode]:
        return await asyncio.gather(*(
            leap.run_sample_episode(t, environment.script.policy, environment, sample=s, task_index=t,
                                    coordinator=coordinator, max_turns=3)
            for t in range(6) for s in range(4)))

    episodes = asyncio.run(every_sample())
    assert coordinator.pending_groups() == 0
    assert [e.masked for e in episodes] == batch.masks and sum(batch.masks) == 6
    for alone, together in zip(episodes, batch.samples):
        assert alone.decision == together.decision
        assert alone.outcome == together.outcome
        assert [(t.verdict, t.environment_failure, t.feedback) for t in alone.turns] == \
               [(t.verdict, t.environment_failure, t.feedback) for t in together.turns]


def test_a_coordinator_leaves_a_member_without_a_verdict_out_of_the_statistics() -> None:
    coordinator = leap.GroupCoordinator(4, leap.FailBandGate(2, 3))

    async def members() -> list[GateDecision]:
        return list(await asyncio.gather(coordinator.decide("g", 0, None), coordinator.decide("g", 1, None),
                                          coordinator.decide("g", 2, Verdict.correct),
                                          coordinator.decide("g", 3, Verdict.wrong_answer)))

    # Two failures of four would be in the band; one failure of the two judged is below it.
    assert set(asyncio.run(members())) == {GateDecision(Expansion.prune_easy, GateReason.too_few_failures)}
    with pytest.raises(TypeError, match="or None"):
        asyncio.run(coordinator.decide("h", 0, "correct"))  # type: ignore[arg-type]
