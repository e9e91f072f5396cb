# SPDX-License-Identifier: Apache-2.0
"""leap: LEAP's rank-based advantages, GRPO-family baselines, turn credit and DCP gates for Python
trainers, computed by the C++ core on numpy arrays and torch CPU tensors without copies.

    import leap
    adv = leap.rank_advantages(solved_turn, group_ids)            # the published order
    adv = leap.rank_advantages_of_scores(scores, uids)            # scalar rewards, any hashable ids
    adv = leap.grpo_advantages(rewards, group_ids)                # the baseline

leap.verl registers these as verl advantage estimators; leap.sandbox drives `leap-sandbox serve`.
leap.run_episodes runs LEAP's multi-turn rollout (turn 1, the DCP gate, feedback turns) over async
policy and environment callables, with the C++ loop's decisions and numbers (leap.episode).
"""
from . import _core
from ._advantages import (grpo_advantages, normalize_advantages, rank_advantages, rank_advantages_of_scores,
                          rloo_advantages)
from ._convert import dense_group_ids
from ._core import (AdvantageNormalization, AlwaysExpand, BudgetedGate, DifficultyTracker, Expansion, FailBandGate,
                    GateDecision, GateReason, GroupStats, KernelOrder, NeverExpand, Outcome, SeverityAwareGate,
                    StepMetrics, Verdict)
from ._signatures import (group_stats, rank_advantages_of_scores_reference, rank_advantages_reference,
                          turn_advantages)
from .episode import (Completion, EpisodeBatch, Evaluation, GroupCoordinator, GroupResult, SampleEpisode, SampleKey,
                      ScoredEpisode, Turn, run_episodes, run_sample_episode, sample_key)

__version__: str = _core.__version__

__all__ = [
    "AdvantageNormalization", "AlwaysExpand", "BudgetedGate", "Completion", "DifficultyTracker", "EpisodeBatch",
    "Evaluation", "Expansion", "FailBandGate", "GateDecision", "GateReason", "GroupCoordinator", "GroupResult",
    "GroupStats", "KernelOrder", "NeverExpand", "Outcome", "SampleEpisode", "SampleKey", "ScoredEpisode",
    "SeverityAwareGate", "StepMetrics", "Turn", "Verdict", "dense_group_ids", "grpo_advantages", "group_stats",
    "normalize_advantages", "rank_advantages",
    "rank_advantages_of_scores", "rank_advantages_of_scores_reference", "rank_advantages_reference",
    "rloo_advantages", "run_episodes", "run_sample_episode", "sample_key", "turn_advantages",
]
