#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The episode runner's own overhead: leap.run_episodes with policy and environment coroutines that do
nothing, so every microsecond measured is the runner's (keys and seeds, tasks, the gate, the replay of
run_step for outcomes, advantages and metrics, the result objects). The budget is 100 us per evaluation.

    PYTHONPATH=build/default/python python3 benchmarks/python/episode_overhead.py [--evaluations 10000]

Cases (each about --evaluations evaluations; the median of --repeats runs):
  single-turn   every group pruned after turn 1 (NeverExpand): one evaluation per sample
  multi-turn    every group expanded, nothing ever solved (AlwaysExpand): max_turns evaluations per sample
  bounded       multi-turn with max_concurrency = 64 (a semaphore around each evaluation)
  per-sample    run_sample_episode for every sample, the groups meeting at a GroupCoordinator
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import leap
from leap import Completion, Evaluation, SampleKey, Turn, Verdict

COMPLETION = Completion("", 1)
WRONG = Evaluation(Verdict.wrong_answer)


async def policy(task: int, so_far: Sequence[Turn], key: SampleKey) -> Completion:
    return COMPLETION


async def environment(task: int, completion: Completion, key: SampleKey) -> Evaluation:
    return WRONG


def batch_case(tasks: int, group_size: int, max_turns: int, gate: leap.episode.Gate,
               max_concurrency: int | None) -> Callable[[], Coroutine[Any, Any, int]]:
    async def run() -> int:
        batch = await leap.run_episodes(list(range(tasks)), policy, environment, group_size=group_size,
                                        max_turns=max_turns, gate=gate, max_concurrency=max_concurrency)
        return int(batch.metrics.evaluations)
    return run


def per_sample_case(tasks: int, group_size: int, max_turns: int) -> Callable[[], Coroutine[Any, Any, int]]:
    async def run() -> int:
        coordinator = leap.GroupCoordinator(group_size, leap.AlwaysExpand())
        episodes = await asyncio.gather(*(
            leap.run_sample_episode(t, policy, environment, sample=s, task_index=t, coordinator=coordinator,
                                    max_turns=max_turns)
            for t in range(tasks) for s in range(group_size)))
        return sum(len(e.turns) for e in episodes)
    return run


def measure(case: Callable[[], Coroutine[Any, Any, int]], repeats: int) -> tuple[float, int]:
    """Median seconds of one run, and the evaluations it made."""
    times: list[float] = []
    evaluations = 0
    for _ in range(repeats):
        start = time.perf_counter()
        evaluations = asyncio.run(case())
        times.append(time.perf_counter() - start)
    return statistics.median(times), evaluations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evaluations", type=int, default=10000)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    G, turns = args.group_size, args.max_turns
    single_tasks = -(-args.evaluations // G)
    multi_tasks = -(-args.evaluations // (G * turns))
    cases = {
        "single-turn": batch_case(single_tasks, G, turns, leap.NeverExpand(), None),
        "multi-turn": batch_case(multi_tasks, G, turns, leap.AlwaysExpand(), None),
        "bounded": batch_case(multi_tasks, G, turns, leap.AlwaysExpand(), 64),
        "per-sample": per_sample_case(multi_tasks, G, turns),
    }
    print(f"leap {leap.__version__}: the runner's overhead with no-op callables, median of {args.repeats}")
    worst = 0.0
    for name, case in cases.items():
        seconds, evaluations = measure(case, args.repeats)
        per_evaluation = seconds / evaluations * 1e6
        worst = max(worst, per_evaluation)
        print(f"  {name:12s} {evaluations:6d} evaluations  {seconds * 1e3:8.1f} ms  {per_evaluation:6.1f} us/eval")
    print(f"worst: {worst:.1f} us per evaluation (budget 100 us): {'within' if worst <= 100 else 'OVER'}")


if __name__ == "__main__":
    main()
