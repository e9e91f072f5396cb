# SPDX-License-Identifier: Apache-2.0
"""leap for verl: advantage estimators, a ready async ``compute_score``, and the reward encoding.

Importing this module registers two estimators with verl's registry when verl is installed
(``verl.trainer.ppo.core_algos.register_adv_est``); a verl that is installed but fails to import
raises here, it is not passed over:

    leap_rank   LEAP's rank-based advantage over the outcome score, (wins - losses) / (G - 1)
    leap_grpo   GRPO's z-score computed by leap; Dr.GRPO (r - mean) when the algorithm config says
                norm_adv_by_std_in_grpo=False

Choose one with ``algorithm.adv_estimator=leap_rank`` and import ``leap.verl`` where verl's driver
runs (the custom reward function's file is imported there: ``compute_score`` below is such a file's
function). Without verl the functions are plain functions of torch tensors.

Both take verl's estimator arguments: the outcome score of a sequence is
``token_level_rewards.sum(-1)``, ``index`` holds the group uids (any hashable values), and the
per-sequence advantage is broadcast over ``response_mask``; both return (advantages, returns), equal.
verl hands a custom estimator only these and the algorithm config, so everything the rank needs
(the turn that solved a sample, its speedup) must be in the one score:

Reward encoding. ``turn_and_speedup_score(t, max_turns, speedup)`` is 0 for a failure and, for a
success at turn t, TURN_SCALE * (max_turns + 1 - t) + log(speedup) with the log clamped to
+-TURN_SCALE / 8, or TURN_SCALE * (max_turns + 1 - t) - TURN_SCALE / 4 when the speedup is unknown:
below every known speed of its turn, so a kernel never gains by hiding its speed (as in
``KernelOrder``). The algorithm config's ``leap_score_tolerance`` (scores within it tie; set it with
Hydra's ``+algorithm.leap_score_tolerance=...``) then picks the order:
  * TURNS_ONLY_TOLERANCE (32): LEAP's published order, earlier turn wins, speed ignored;
  * ``speedup_tolerance(tol)`` = log(1 + tol): turn, then speedup outside a relative band tol, an
    unknown speedup below every known one;
  * 0 (the default): turn, then any speedup difference.
``turn_score(t, max_turns)`` (max_turns + 1 - t, 0 for a failure) gives the published order at
tolerance 0 for rewards that carry no speedup.

The one deliberate difference from verl's GRPO: a group of one sample gets advantage 0 (it has no
baseline; verl's GRPO gives it r / (1 + epsilon)), and either estimator warns when it sees one.
"""
from __future__ import annotations

import importlib
import importlib.util
import math
import os
import threading
import warnings
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import numpy as np

from . import _advantages as _untyped_advantages
from . import _convert as _untyped_convert

if TYPE_CHECKING:
    import torch

# leap's array functions and sandbox client carry no annotations (the .pyi stubs do): typed as Any here
_advantages: Any = _untyped_advantages
_convert: Any = _untyped_convert

__all__ = ["TURNS_ONLY_TOLERANCE", "TURN_SCALE", "compute_score", "configure_sandbox", "process_pool",
           "leap_grpo_advantage", "leap_rank_advantage", "registered", "sandbox_environment", "speedup_tolerance",
           "turn_and_speedup_score", "turn_score"]

TURN_SCALE = 64.0  # score units per turn in turn_and_speedup_score
# Within a turn's TURN_SCALE: a known speedup at log(speedup) clamped to +-8 (a factor of ~2981), an
# unknown one at -16, 8 below the slowest known. So scores of one turn lie in [-16, 8] around the turn's
# base, at most 24 apart, and scores of different turns (or a success and a failure) at least
# 64 - 24 = 40 apart.
_LOG_SPEEDUP_LIMIT = TURN_SCALE / 8
_UNKNOWN_SPEEDUP = -TURN_SCALE / 4
TURNS_ONLY_TOLERANCE = TURN_SCALE / 2  # ties every same-turn pair (<= 24 apart), no two turns (>= 40 apart)


def turn_score(solved_turn: int, max_turns: int) -> float:
    """The scalar reward that gives LEAP's published order: max_turns + 1 - t for a success at turn
    t >= 1, 0 for a failure (solved_turn 0)."""
    if solved_turn < 0 or solved_turn > max_turns:
        raise ValueError(f"solved_turn ({solved_turn}) must lie in [0, max_turns ({max_turns})]; 0 = never solved")
    return float(max_turns + 1 - solved_turn) if solved_turn > 0 else 0.0


def turn_and_speedup_score(solved_turn: int, max_turns: int, speedup: Optional[float] = None) -> float:
    """A success: TURN_SCALE * (max_turns + 1 - t) + log(speedup), with the log clamped to
    +-TURN_SCALE / 8 so that an earlier turn always wins; a failure: 0. An unknown (None, NaN, <= 0)
    speedup scores TURN_SCALE / 4 below the turn's base, under every known speed of the turn (an
    unknown speedup never pays, as in KernelOrder); +inf is known (clamped). Rank with
    leap_score_tolerance = TURNS_ONLY_TOLERANCE for the published order, speedup_tolerance(tol) for
    a speedup band."""
    base = turn_score(solved_turn, max_turns)
    if base == 0.0:
        return 0.0
    if speedup is None or not speedup > 0:  # NaN too
        return TURN_SCALE * base + _UNKNOWN_SPEEDUP
    return TURN_SCALE * base + min(max(math.log(speedup), -_LOG_SPEEDUP_LIMIT), _LOG_SPEEDUP_LIMIT)


def speedup_tolerance(relative: float) -> float:
    """The score tolerance that makes speedups within a factor 1 + relative tie. Below
    e^8 - 1 (~2980), so that the band never reaches from the slowest known speed to an unknown one."""
    if not relative >= 0:
        raise ValueError(f"relative ({relative}) must be >= 0")
    tolerance = math.log1p(relative)
    if not tolerance < -_LOG_SPEEDUP_LIMIT - _UNKNOWN_SPEEDUP:  # the gap below the slowest known speed
        raise ValueError(f"relative ({relative}) is a band of a factor {1 + relative:g}, which would tie an unknown "
                         f"speedup with known ones; use one below {math.expm1(_LOG_SPEEDUP_LIMIT):.0f}, or "
                         "TURNS_ONLY_TOLERANCE to ignore speed")
    return tolerance


def _setting(config: Any, name: str, default: Any) -> Any:
    """A setting of verl's algorithm config (a dataclass, an omegaconf node in struct mode or not, or
    a dict), or default when it is absent or None."""
    if config is None:
        return default
    if isinstance(config, Mapping):
        value = config.get(name, None)
        return default if value is None else value
    value = getattr(config, name, None)  # omegaconf's missing key in struct mode is an AttributeError
    if value is None and hasattr(config, "get"):
        try:
            value = config.get(name, None)
        except (TypeError, KeyError, AttributeError):
            value = None
    return default if value is None else value


def _scores_and_ids(token_level_rewards: "torch.Tensor", index: Any) -> tuple["torch.Tensor", "np.ndarray[Any, Any]"]:
    import torch  # verl's estimators take tensors; torch is there whenever verl is

    if token_level_rewards.dim() != 2:
        raise ValueError(f"token_level_rewards must be (batch, response_length), got {tuple(token_level_rewards.shape)}")
    scores = token_level_rewards.sum(dim=-1).detach()
    if len(index) != scores.shape[0]:
        raise ValueError(f"index has {len(index)} uids but token_level_rewards has {scores.shape[0]} rows")
    compute_dtype = scores.dtype if scores.dtype in (torch.float32, torch.float64) else torch.float32
    ids = _convert.dense_group_ids(np.asarray(index))
    _warn_on_groups_of_one(ids)
    return scores.to(device="cpu", dtype=compute_dtype).contiguous(), ids


def _warn_on_groups_of_one(ids: "np.ndarray[Any, Any]") -> None:
    if len(ids) == 0:
        return
    sizes = np.bincount(np.asarray(ids, dtype=np.int64))
    alone = int(np.count_nonzero(sizes == 1))
    if alone:
        warnings.warn(
            f"{alone} of {int(np.count_nonzero(sizes))} uid groups have a single sample: their advantage is 0 and "
            f"they do not train (a group needs two samples for a baseline; set actor_rollout_ref.rollout.n >= 2)",
            RuntimeWarning, stacklevel=4)


def _broadcast(per_sequence: "torch.Tensor", token_level_rewards: "torch.Tensor",
               response_mask: "torch.Tensor") -> tuple["torch.Tensor", "torch.Tensor"]:
    advantages = per_sequence.to(device=token_level_rewards.device, dtype=token_level_rewards.dtype)
    advantages = advantages.unsqueeze(-1) * response_mask
    return advantages, advantages


def leap_rank_advantage(token_level_rewards: "torch.Tensor", response_mask: "torch.Tensor", index: Any,
                        epsilon: float = 1e-6, norm_adv_by_std_in_grpo: bool = True, config: Any = None,
                        **kwargs: Any) -> tuple["torch.Tensor", "torch.Tensor"]:
    """verl estimator `leap_rank`: (wins - losses) / (G - 1) over the outcome scores within each uid
    group, ties within the config's leap_score_tolerance (default 0). epsilon and
    norm_adv_by_std_in_grpo do not apply to a rank and are ignored."""
    import torch

    scores, ids = _scores_and_ids(token_level_rewards, index)
    tolerance = float(_setting(config, "leap_score_tolerance", 0.0))
    with torch.no_grad():
        per_sequence = _advantages.rank_advantages_of_scores(scores, ids, tolerance)
        return _broadcast(per_sequence, token_level_rewards, response_mask)


def leap_grpo_advantage(token_level_rewards: "torch.Tensor", response_mask: "torch.Tensor", index: Any,
                        epsilon: float = 1e-6, norm_adv_by_std_in_grpo: bool = True, config: Any = None,
                        **kwargs: Any) -> tuple["torch.Tensor", "torch.Tensor"]:
    """verl estimator `leap_grpo`: verl's GRPO, (r - mean) / (std + epsilon) with the unbiased std
    per uid group, or Dr.GRPO's r - mean when norm_adv_by_std_in_grpo is False. verl's trainer passes
    that setting only to its own `grpo`; a custom estimator gets the algorithm config, so the
    config's value wins over the keyword. A group of one gets 0."""
    import torch

    scores, ids = _scores_and_ids(token_level_rewards, index)
    scale_by_std = bool(_setting(config, "norm_adv_by_std_in_grpo", norm_adv_by_std_in_grpo))
    with torch.no_grad():
        per_sequence = _advantages.grpo_advantages(scores, ids, epsilon=epsilon, scale_by_std=scale_by_std)
        return _broadcast(per_sequence, token_level_rewards, response_mask)


ESTIMATORS: dict[str, Callable[..., tuple["torch.Tensor", "torch.Tensor"]]] = {
    "leap_rank": leap_rank_advantage, "leap_grpo": leap_grpo_advantage}


def verl_installed() -> bool:
    """Whether a package named verl can be found (imported or not)."""
    return importlib.util.find_spec("verl") is not None


def _register() -> tuple[str, ...]:
    """Registers ESTIMATORS with verl when verl is installed; returns the names registered. A verl
    that is installed but whose core_algos fails to import is an ImportError naming the cause."""
    if not verl_installed():
        return ()
    try:
        core_algos = importlib.import_module("verl.trainer.ppo.core_algos")
    except Exception as error:
        raise ImportError(f"leap.verl: verl is installed ({importlib.util.find_spec('verl').origin}) but "  # type: ignore[union-attr]
                          f"verl.trainer.ppo.core_algos failed to import ({type(error).__name__}: {error}); "
                          f"leap_rank and leap_grpo cannot be registered") from error
    for name, function in ESTIMATORS.items():
        core_algos.register_adv_est(name)(function)
    return tuple(ESTIMATORS)


registered = _register()


# ---- the sandbox as a reward: one pool per process ---------------------------------------------------

_pool_lock = threading.Lock()
_pool: Any = None
_pool_pid: Optional[int] = None
_environment: Any = None
_pool_settings: dict[str, Any] = {}


def configure_sandbox(executable: Any = None, **pool_kwargs: Any) -> None:
    """Sets how this process's pool is made when it is first used: the leap-sandbox program (default:
    $LEAP_SANDBOX, else `leap-sandbox` on PATH; a list for a program with leading arguments) and
    SandboxPool's keyword arguments (devices, servers, args, ...). A pool made already is closed and
    made again on next use."""
    global _pool, _pool_pid, _environment
    with _pool_lock:
        _pool_settings.clear()
        if executable is not None:
            _pool_settings["executable"] = executable
        _pool_settings.update(pool_kwargs)
        old, mine = _pool, _pool_pid == os.getpid()
        _pool, _pool_pid, _environment = None, None, None
    if old is not None and mine:
        old.close()


def process_pool(executable: Any = None) -> Any:
    """This process's SandboxPool, made on first use. verl imports the reward file in the driver and
    in every reward worker, and may fork: a pool made by another process (a forked parent's) is left
    to that process and this one makes its own."""
    global _pool, _pool_pid, _environment
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            SandboxPool: Any = importlib.import_module(".sandbox", __package__).SandboxPool
            settings = dict(_pool_settings)
            program = executable or settings.pop("executable", None) or os.environ.get("LEAP_SANDBOX", "leap-sandbox")
            settings.pop("executable", None)
            _pool, _pool_pid, _environment = SandboxPool(program, **settings), os.getpid(), None
        return _pool


def sandbox_environment(executable: Any = None) -> Any:
    """This process's leap.environment.SandboxEnvironment over process_pool(): an episode environment,
    (task, leap.Completion, leap.SampleKey) -> leap.Evaluation, that evaluates the completion's kernel."""
    global _environment
    pool = process_pool(executable)
    with _pool_lock:
        if _environment is None or _environment.sandbox is not pool:
            SandboxEnvironment: Any = importlib.import_module(".environment", __package__).SandboxEnvironment
            _environment = SandboxEnvironment(pool)
        return _environment


async def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                        extra_info: Optional[Mapping[str, Any]] = None, *, sandbox: Any = None,
                        max_turns: int = 1, **kwargs: Any) -> dict[str, Any]:
    """verl's custom reward function (``custom_reward_function.path=pkg://leap.verl``,
    ``custom_reward_function.name=compute_score``): evaluates the response's kernel (the last fenced
    block, leap.environment.extract_kernel) against the task ``ground_truth`` (``extra_info["leap_task"]``
    when present) on this process's pool and returns verl's dict form: "score"
    (turn_and_speedup_score of solved turn 1 or 0) and, as extra fields for the logs, "verdict",
    "speedup" (NaN when unknown) and "solved_turn". verl's reward loop awaits it (its managers call a
    coroutine function with await); ``reward_kwargs`` from the config arrive as keywords (sandbox:
    the leap-sandbox program, max_turns: the turn scale of the score). Where the sandbox gives no
    verdict (no GPU: leap.environment.NoVerdict; a harness failure: SandboxError) it raises rather
    than score 0."""
    episode: Any = importlib.import_module(".episode", __package__)
    task = extra_info.get("leap_task", ground_truth) if extra_info else ground_truth
    evaluation = await sandbox_environment(sandbox)(task, episode.Completion(solution_str), episode.sample_key(0, 0, 1))
    verdict = evaluation.verdict.name
    solved_turn = 1 if verdict == "correct" else 0
    return score_fields(solved_turn, max_turns, verdict, evaluation.speedup)


def score_fields(solved_turn: int, max_turns: int, verdict: str, speedup: float) -> dict[str, Any]:
    """The score and extra fields of one episode, as compute_score and the agent loop report them."""
    return {"score": turn_and_speedup_score(solved_turn, max_turns, speedup), "verdict": verdict,
            "speedup": speedup, "solved_turn": solved_turn}
