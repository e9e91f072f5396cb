# SPDX-License-Identifier: Apache-2.0
"""leap for verl: advantage estimators, a ready async ``compute_score``, and the reward encoding.

Importing this module registers two estimators with verl's registry when verl is installed
(``verl.trainer.ppo.core_algos.register_adv_est``); a verl that is installed but fails to import
raises here, it is not passed over:

    leap_rank   LEAP's rank-based advantage over the outcome score, (wins - losses) / (G - 1)
    leap_grpo   GRPO's z-score computed by leap; Dr.GRPO (r - mean) when the algorithm config says
                norm_adv_by_std_in_grpo=False

Choose one with ``algorithm.adv_estimator=leap_rank``. verl computes the advantage in its task runner
(TaskRunnerV1, a Ray actor with a process of its own), so this module must be imported there, and verl
does it itself (verl-project/verl 1dda039, verl/__init__.py:49-76: every ``import verl`` imports the
modules named in ``VERL_USE_EXTERNAL_MODULES`` and the ``verl.plugins`` entry points):

  * a ``pip install``-ed leap declares the entry point ``leap = leap.verl`` in ``verl.plugins``: every
    process of the run registers the estimators, with nothing to add;
  * any leap (a build tree on PYTHONPATH too): the one-line override REGISTRATION_OVERRIDE,
    ``+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=leap.verl``, sets it in every
    Ray actor's environment (verl's trainer config passes ``ray_kwargs.ray_init.runtime_env`` to
    ray.init). A task runner that cannot import leap then stops at start-up, before any rollout, with
    the import's error.

``registration_advice(estimator)`` says what to add when neither is in force in this process (leap's
agent loop warns with it). Without verl the functions are plain functions of torch tensors.

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

Masked samples. A sample whose environment failed (leap.verl_agent's loop gives it a response_mask of
all 0, so verl's loss skips every token of it), or whose score is NaN, is no one's failure: both
estimators leave it out of its group (the others are ranked, or z-scored, among themselves) and give it
advantage 0. ``compute_score`` cannot mask (a reward function returns one score, which verl's own
estimators would rank): it evaluates again (``environment_retries``) and raises when no attempt gets a
verdict, as before.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, cast

import numpy as np

from . import _advantages as _untyped_advantages
from . import _convert as _untyped_convert
from . import process_sandbox
from .scores import (TURN_SCALE, TURNS_ONLY_TOLERANCE, score_fields, speedup_tolerance, turn_and_speedup_score,
                     turn_score)

if TYPE_CHECKING:
    import torch

# leap's array functions and sandbox client carry no annotations (the .pyi stubs do): typed as Any here
_advantages: Any = _untyped_advantages
_convert: Any = _untyped_convert

__all__ = ["REGISTRATION_OVERRIDE", "TURNS_ONLY_TOLERANCE", "TURN_SCALE", "compute_score", "configure_sandbox",
           "leap_grpo_advantage", "leap_rank_advantage", "process_pool", "registered", "registration_advice",
           "sandbox_environment", "speedup_tolerance", "turn_and_speedup_score", "turn_score"]

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


def _judged_rows(scores: "torch.Tensor", response_mask: "torch.Tensor") -> "np.ndarray[Any, Any]":
    """The rows to rank: a finite score and at least one response token to train (the agent loop gives a
    masked sample, one whose environment failed, a response_mask of all 0)."""
    import torch

    if response_mask.dim() != 2 or response_mask.shape[0] != scores.shape[0]:
        raise ValueError(f"response_mask must be (batch, response_length) with {scores.shape[0]} rows, got "
                         f"{tuple(response_mask.shape)}")
    trained = (response_mask.detach() != 0).any(dim=-1).to("cpu")
    return cast("np.ndarray[Any, Any]", (torch.isfinite(scores) & trained).numpy())


def _over_judged(scores: "torch.Tensor", ids: "np.ndarray[Any, Any]", judged: "np.ndarray[Any, Any]",
                 estimate: Callable[[Any, Any], Any]) -> "torch.Tensor":
    """estimate(scores, ids) over the judged rows; the others get 0."""
    import torch

    if judged.all():
        return cast("torch.Tensor", estimate(scores, ids))
    per_sequence = torch.zeros_like(scores)
    if judged.any():
        rows = torch.from_numpy(np.flatnonzero(judged))
        per_sequence[rows] = estimate(scores[rows].contiguous(), np.ascontiguousarray(ids[judged]))
    return per_sequence


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
    norm_adv_by_std_in_grpo do not apply to a rank and are ignored. A masked row (no response token to
    train, or a NaN score) is left out of its group and gets 0."""
    import torch

    scores, ids = _scores_and_ids(token_level_rewards, index)
    judged = _judged_rows(scores, response_mask)
    tolerance = float(_setting(config, "leap_score_tolerance", 0.0))
    with torch.no_grad():
        per_sequence = _over_judged(scores, ids, judged,
                                    lambda s, i: _advantages.rank_advantages_of_scores(s, i, tolerance))
        return _broadcast(per_sequence, token_level_rewards, response_mask)


def leap_grpo_advantage(token_level_rewards: "torch.Tensor", response_mask: "torch.Tensor", index: Any,
                        epsilon: float = 1e-6, norm_adv_by_std_in_grpo: bool = True, config: Any = None,
                        **kwargs: Any) -> tuple["torch.Tensor", "torch.Tensor"]:
    """verl estimator `leap_grpo`: verl's GRPO, (r - mean) / (std + epsilon) with the unbiased std
    per uid group, or Dr.GRPO's r - mean when norm_adv_by_std_in_grpo is False. verl's trainer passes
    that setting only to its own `grpo`; a custom estimator gets the algorithm config, so the
    config's value wins over the keyword. A group of one gets 0; a masked row is left out and gets 0."""
    import torch

    scores, ids = _scores_and_ids(token_level_rewards, index)
    judged = _judged_rows(scores, response_mask)
    scale_by_std = bool(_setting(config, "norm_adv_by_std_in_grpo", norm_adv_by_std_in_grpo))
    with torch.no_grad():
        per_sequence = _over_judged(scores, ids, judged, lambda s, i: _advantages.grpo_advantages(
            s, i, epsilon=epsilon, scale_by_std=scale_by_std))
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

#: The Hydra override that makes verl import leap.verl in every Ray actor of a run (its task runner included).
REGISTRATION_OVERRIDE = "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=leap.verl"
_LEAP_MODULES = ("leap.verl", "leap.verl_agent")  # either registers the estimators when imported


def _loaded_by_verl() -> Optional[str]:
    """How verl imports leap.verl in each of its processes, judged from this process's environment (Ray
    gives every actor of a job the same runtime env): "modules" ($VERL_USE_EXTERNAL_MODULES names it),
    "plugin" (leap's verl.plugins entry point is installed and $VERL_USE_EXTERNAL_PLUGINS allows it), or
    None."""
    modules = {m.strip() for m in os.environ.get("VERL_USE_EXTERNAL_MODULES", "").split(",") if m.strip()}
    if modules & set(_LEAP_MODULES):
        return "modules"
    policy = os.environ.get("VERL_USE_EXTERNAL_PLUGINS", "auto").strip().lower()
    if policy == "none":
        return None
    allowed = None if policy == "auto" else {name.strip() for name in policy.split(",") if name.strip()}
    try:
        from importlib import metadata
        found: Any = metadata.entry_points()
        # Python 3.10+ selects by group; 3.9 returns a dict of groups
        plugins = list(found.select(group="verl.plugins") if hasattr(found, "select") else found.get("verl.plugins", []))
    except Exception:  # noqa: BLE001 - unreadable metadata: no plugin can be relied on
        return None
    for plugin in plugins:
        if plugin.value.split(":")[0].strip() in _LEAP_MODULES and (allowed is None or plugin.name in allowed):
            return "plugin"
    return None


def registration_advice(estimator: str) -> Optional[str]:
    """None when `estimator` is not one of leap's, or when verl imports leap.verl in every process of this
    run by itself (see the module's documentation); otherwise what to add, as a message."""
    if str(estimator) not in ESTIMATORS or _loaded_by_verl() is not None:
        return None
    return (f"leap: algorithm.adv_estimator={estimator} is computed in verl's task runner (TaskRunnerV1, a Ray "
            f"actor), which has it only when verl imports leap.verl there. Add {REGISTRATION_OVERRIDE} (verl imports "
            f"VERL_USE_EXTERNAL_MODULES in every Ray actor), or pip install leap (its verl.plugins entry point does "
            f"the same); otherwise the run stops at its first compute_advantage with 'Unknown advantage estimator'")


# ---- the sandbox as a reward: one client per process (leap.process_sandbox) ----------------------------

configure_sandbox = process_sandbox.configure
process_pool = process_sandbox.client
sandbox_environment = process_sandbox.environment


async def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                        extra_info: Optional[Mapping[str, Any]] = None, *, sandbox: Any = None, devices: Any = None,
                        fleet: Any = None, max_turns: int = 1, environment_retries: int = 1,
                        **kwargs: Any) -> dict[str, Any]:
    """verl's custom reward function (``reward.custom_reward_function.path=pkg://leap.verl``,
    ``reward.custom_reward_function.name=compute_score``): evaluates the response's kernel (the last
    fenced block, leap.environment.extract_kernel) against the row's task (leap.rows.task_of:
    ``extra_info["leap_task"]``, else ``ground_truth``) on this process's sandbox and returns verl's dict
    form: "score" (turn_and_speedup_score of solved turn 1 or 0) and, as extra fields for the logs,
    "verdict", "speedup" (NaN when unknown), "solved_turn" and "masked". verl's reward loop awaits it;
    ``reward.custom_reward_function.reward_kwargs`` arrive as keywords: where kernels run (``devices``:
    GPU ids for a local pool, ``sandbox``: the leap-sandbox program, or ``fleet``: a Redis URL; see
    leap.process_sandbox), ``max_turns`` (the turn scale of the score) and ``environment_retries``
    (evaluations again after an environment failure). Where the sandbox gives no verdict on any attempt
    (no GPU: leap.environment.NoVerdict; a harness failure or an error answer: SandboxError; a timeout)
    it raises the last failure rather than score 0: an environment failure is not the candidate's, and
    a reward function has no way to leave a sample out of verl's own estimators (the agent loop masks
    it)."""
    episode: Any = importlib.import_module(".episode", __package__)
    rows: Any = importlib.import_module(".rows", __package__)
    task = rows.task_of({"ground_truth": ground_truth, "extra_info": extra_info})
    if devices is not None or fleet is not None:
        process_sandbox.configure_from({"executable": sandbox, "devices": devices, "fleet": fleet})
        sandbox = None
    environment = sandbox_environment(sandbox)
    completion = episode.Completion(solution_str)
    for attempt in range(environment_retries + 1):
        try:
            evaluation = await environment(task, completion, episode.sample_key(0, 0, 1)._replace(attempt=attempt))
        except Exception:
            if attempt == environment_retries:
                raise
            continue
        break
    verdict = evaluation.verdict.name
    solved_turn = 1 if verdict == "correct" else 0
    return score_fields(solved_turn, max_turns, verdict, evaluation.speedup)
