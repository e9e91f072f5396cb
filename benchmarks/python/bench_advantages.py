#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""leap's Python calls against pure-torch implementations of the same estimators, and against the
C++ call itself, on 2^16 and 2^20 rows in groups of G. Every figure is a median of repeated runs,
all taken in this one process; compare ratios, not absolute times across machines.

    PYTHONPATH=build/default/python python3 benchmarks/python/bench_advantages.py [--group-size 8] [--quick]

Estimators (scores: a success at turn t scored 4 - t, a failure 0; groups contiguous, as trainers
lay them out):
  GRPO   leap.grpo_advantages  vs  verl's formula in torch, written here twice: as verl's default
         estimator computes it (a Python loop over rows collecting each uid's scores, torch.mean and
         torch.std per group) and vectorised (scatter sums per group)
  rank   leap.rank_advantages_of_scores  vs  the pairwise tournament vectorised in torch
         (a (groups, G, G) comparison)
Overhead: leap's Python call (argument checks, numpy views, the binding) against the same C++
function called in a loop from C++ on the same arrays (leap._core._native_seconds).
"""
import argparse
import statistics
import time

import numpy as np
import torch

import leap
from leap import _core


def median_seconds(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def verl_grpo_loop(scores, index, epsilon=1e-6):
    """verl's GRPO outcome advantage the way its default estimator computes it: per-uid lists."""
    scores = scores.clone()
    by_uid, mean, std = {}, {}, {}
    with torch.no_grad():
        for i in range(scores.shape[0]):
            by_uid.setdefault(index[i], []).append(scores[i])
        for uid, members in by_uid.items():
            if len(members) == 1:
                mean[uid], std[uid] = torch.tensor(0.0), torch.tensor(1.0)
            else:
                stacked = torch.stack(members)
                mean[uid], std[uid] = torch.mean(stacked), torch.std(stacked)
        for i in range(scores.shape[0]):
            scores[i] = (scores[i] - mean[index[i]]) / (std[index[i]] + epsilon)
    return scores


def torch_grpo_vectorised(scores, ids, epsilon=1e-6):
    """The same formula with scatter sums: dense group ids in, one pass per statistic."""
    groups = int(ids.max()) + 1
    count = torch.zeros(groups, dtype=scores.dtype).index_add_(0, ids, torch.ones_like(scores))
    mean = torch.zeros(groups, dtype=scores.dtype).index_add_(0, ids, scores) / count
    centred = scores - mean[ids]
    var = torch.zeros(groups, dtype=scores.dtype).index_add_(0, ids, centred * centred) / (count - 1).clamp(min=1)
    out = centred / (var.sqrt()[ids] + epsilon)
    return torch.where(count[ids] > 1, out, scores / (1 + epsilon))  # verl: a lone sample gets r / (1 + eps)


def torch_rank_vectorised(scores, group_size):
    """Copeland scores of contiguous groups of G: every pair compared at once."""
    grouped = scores.view(-1, group_size)
    wins = (grouped.unsqueeze(2) > grouped.unsqueeze(1)).sum(2)
    losses = (grouped.unsqueeze(2) < grouped.unsqueeze(1)).sum(2)
    return ((wins - losses).to(scores.dtype) / (group_size - 1)).view(-1)


def batch(rows, group_size, seed=7):
    rng = np.random.default_rng(seed)
    turns = rng.choice([0, 1, 2, 3], rows, p=[0.35, 0.45, 0.12, 0.08])
    scores = np.where(turns > 0, 4.0 - turns, 0.0)
    ids = (np.arange(rows) // group_size).astype(np.uint32)
    return scores, ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    options = parser.parse_args()
    g = options.group_size
    repeats = 3 if options.quick else 15
    torch.set_num_threads(1)  # leap runs on one thread; so does the torch it is compared with
    print(f"leap {leap.__version__}, torch {torch.__version__}, numpy {np.__version__}; G = {g}; "
          f"median of {repeats} runs; torch on {torch.get_num_threads()} thread")

    for log_rows in (16, 20):
        rows = 1 << log_rows
        scores, ids = batch(rows, g)
        scores_t = torch.from_numpy(scores)
        ids_t = torch.from_numpy(ids.astype(np.int64))
        out = np.empty(rows)
        print(f"\n2^{log_rows} = {rows} rows")

        leap_grpo = median_seconds(lambda: leap.grpo_advantages(scores, ids, out=out), repeats)
        leap_grpo_t = median_seconds(lambda: leap.grpo_advantages(scores_t, ids_t), repeats)
        torch_grpo = median_seconds(lambda: torch_grpo_vectorised(scores_t, ids_t), repeats)
        expected = torch_grpo_vectorised(scores_t, ids_t).numpy()
        assert np.allclose(leap.grpo_advantages(scores, ids), expected, rtol=1e-12, atol=1e-12)
        print(f"  GRPO  leap (numpy)       {leap_grpo * 1e3:9.3f} ms  {leap_grpo / rows * 1e9:8.1f} ns/row")
        print(f"  GRPO  leap (torch in)    {leap_grpo_t * 1e3:9.3f} ms  {leap_grpo_t / rows * 1e9:8.1f} ns/row")
        print(f"  GRPO  torch vectorised   {torch_grpo * 1e3:9.3f} ms  {torch_grpo / rows * 1e9:8.1f} ns/row"
              f"   -> leap {torch_grpo / leap_grpo:.1f}x faster")
        if log_rows == 16:  # verl's loop takes microseconds per row: timed on the smaller batch only
            uids = np.array([f"uid-{i}" for i in ids], dtype=object)
            loop = median_seconds(lambda: verl_grpo_loop(scores_t.float(), uids), 1 if options.quick else 3)
            dense_uids = median_seconds(lambda: leap.dense_group_ids(uids), repeats)
            print(f"  GRPO  torch, verl's loop {loop * 1e3:9.3f} ms  {loop / rows * 1e9:8.1f} ns/row"
                  f"   -> leap {loop / leap_grpo:.0f}x faster ({loop / (leap_grpo + dense_uids):.0f}x with the uid "
                  f"strings numbered by leap.dense_group_ids, {dense_uids / rows * 1e9:.0f} ns/row)")

        leap_rank = median_seconds(lambda: leap.rank_advantages_of_scores(scores, ids, out=out), repeats)
        torch_rank = median_seconds(lambda: torch_rank_vectorised(scores_t, g), repeats)
        assert np.array_equal(leap.rank_advantages_of_scores(scores, ids), torch_rank_vectorised(scores_t, g).numpy())
        print(f"  rank  leap (numpy)       {leap_rank * 1e3:9.3f} ms  {leap_rank / rows * 1e9:8.1f} ns/row")
        print(f"  rank  torch vectorised   {torch_rank * 1e3:9.3f} ms  {torch_rank / rows * 1e9:8.1f} ns/row"
              f"   -> leap {torch_rank / leap_rank:.1f}x faster")

        if log_rows == 20:
            print("  Python call against the C++ call on the same arrays (target: within 1.5x):")
            turns = np.where(scores > 0, 4 - scores, 0).astype(np.int32)
            calls = {
                "grpo": lambda: leap.grpo_advantages(scores, ids, out=out),
                "scores": lambda: leap.rank_advantages_of_scores(scores, ids, out=out),
                "rank": lambda: leap.rank_advantages(turns, ids, order=leap.KernelOrder.turns_only(), out=out),
            }
            for kind, call in calls.items():
                python = median_seconds(call, repeats)
                native = _core._native_seconds(kind, repeats, scores, ids, out)
                python = min(python, median_seconds(call, repeats))  # interleaved twice against drift
                note = " (includes gathering the outcome columns)" if kind == "rank" else ""
                print(f"    {kind:7s} Python {python * 1e3:8.3f} ms, C++ {native * 1e3:8.3f} ms: "
                      f"{python / native:.2f}x{note}")


if __name__ == "__main__":
    main()
