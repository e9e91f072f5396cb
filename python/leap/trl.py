# SPDX-License-Identifier: Apache-2.0
"""leap in TRL's GRPOTrainer: leap's advantages in place of TRL's, LEAP's multi-turn episode as TRL's
``rollout_func``, and a generation recipe that calls TRL's vLLM server from every training process.
Followed at huggingface/trl f2cd577 (1.10.0.dev0); it imports neither verl nor leap.verl.

    from trl import GRPOTrainer
    import leap.trl

    trainer = leap.trl.leap_grpo_trainer(GRPOTrainer)(
        model=..., args=GRPOConfig(..., use_vllm=True, vllm_mode="server"), train_dataset=rows,   # leap.rows
        reward_funcs=[leap.trl.leap_reward(max_turns=3)],
        rollout_func=leap.trl.make_rollout_func(leap.trl.vllm_server_generate(), max_turns=3,
                                                sandbox={"devices": [0, 1]}),
        leap_score_tolerance=leap.scores.TURNS_ONLY_TOLERANCE)

Advantages. TRL computes advantages inline in ``GRPOTrainer._generate_and_score_completions`` (no hook),
from the rewards ``_calculate_rewards`` returns gathered across processes; a process's rows are the slice
[process_index * local, (process_index + 1) * local) of the gathered batch, and a group is
``num_generations`` consecutive rows of it, so a group can straddle processes. The subclass keeps the
gathered rewards, computes leap's advantages over the whole batch and puts back its process's slice.
``leap_estimator="rank"`` (default): the rank of the weighted reward sum within each group, ties within
``leap_score_tolerance``; ``"grpo"``/``"dr_grpo"``: leap's GRPO / Dr.GRPO. A row every reward function
left unscored (all None, NaN in TRL) is left out of its group and gets 0, as TRL does. The subclass logs
leap's advantages where TRL logs its own (the completions table), and the episodes' ``leap/solved@t``,
``leap/masked_samples``, ``leap/expanded_samples`` and ``leap/turns_mean`` among TRL's metrics.

Rows. TRL hands rollout_func only the prompts; the subclass keeps the batch's rows, so make_rollout_func
reads each row's task from its dataset row (leap.rows) without a task_of of yours.

Environment failures. make_rollout_func evaluates a completion again after an environment failure
(``environment_retries``), then masks the row (leap.episode): it reports no verdict to its group's
gate, ends, and comes back with ``masked`` = 1 and an ``env_mask`` of all 0, so TRL's loss skips every
token of it; leap_reward leaves it unscored (None), so leap_advantages leaves it out of its group.
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import urllib.request
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np

from . import _advantages as _untyped_advantages
from . import process_sandbox, rows
from ._multiturn import (DEFAULT_FEEDBACK, OutOfRoom, band_for, chat_suffix_ids, run_to_completion, token_ids,
                         trained_outcome)
from .episode import Completion, SampleKey, run_sample_episode
from .scores import turn_and_speedup_score

_advantages: Any = _untyped_advantages
_core: Any = importlib.import_module("._core", __package__)

__all__ = ["Generation", "leap_advantages", "leap_grpo_trainer", "leap_reward", "make_rollout_func",
           "vllm_server_generate"]


def leap_advantages(rewards: Any, group_size: int, estimator: str = "rank", tolerance: float = 0.0,
                    epsilon: float = 1e-6) -> "np.ndarray[Any, Any]":
    """leap's advantages over TRL's gathered rewards (one per row; NaN = unscorable), groups of
    `group_size` consecutive rows. Unscorable rows get 0 and are left out of their group."""
    values = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if group_size < 1 or len(values) % group_size:
        raise ValueError(f"{len(values)} rewards do not split into groups of {group_size}")
    ids = np.arange(len(values), dtype=np.uint32) // np.uint32(group_size)
    scorable = ~np.isnan(values)
    out = np.zeros(len(values))
    if not scorable.any():
        return out
    kept, kept_ids = np.ascontiguousarray(values[scorable]), np.ascontiguousarray(ids[scorable])
    if estimator == "rank":
        out[scorable] = _advantages.rank_advantages_of_scores(kept, kept_ids, tolerance)
    elif estimator in ("grpo", "dr_grpo"):
        out[scorable] = _advantages.grpo_advantages(kept, kept_ids, epsilon=epsilon, scale_by_std=estimator == "grpo")
    else:
        raise ValueError(f"leap_estimator {estimator!r}: expected 'rank', 'grpo' or 'dr_grpo'")
    return out


def _gather_object(values: list[Any]) -> list[Any]:
    utils: Any = importlib.import_module("accelerate.utils")  # TRL's own dependency
    return list(utils.gather_object(values))


def _episode_metrics(fields: Sequence[dict[str, Any]], max_turns: int) -> dict[str, float]:
    """leap/solved@t (over the judged rows), leap/masked_samples, leap/expanded_samples, leap/turns_mean."""
    judged = [f for f in fields if not f.get("masked")]
    metrics = {f"leap/solved@{t}": (sum(1 for f in judged if 0 < int(f["solved_turn"]) <= t) / len(judged)
                                    if judged else 0.0) for t in range(1, max_turns + 1)}
    count = max(len(fields), 1)
    metrics["leap/masked_samples"] = sum(1 for f in fields if f.get("masked")) / count
    metrics["leap/expanded_samples"] = sum(1 for f in fields if f.get("gate") == "expand") / count
    metrics["leap/turns_mean"] = sum(int(f.get("turns", 0)) for f in fields) / count
    return metrics


def leap_grpo_trainer(base: type) -> type:
    """A subclass of TRL's GRPOTrainer (`base`) whose advantages are leap's. Extra keyword arguments:
    leap_estimator ("rank", "grpo", "dr_grpo") and leap_score_tolerance (rank ties)."""

    class LeapGRPOTrainer(base):  # type: ignore[misc]
        def __init__(self, *args: Any, leap_estimator: str = "rank", leap_score_tolerance: float = 0.0,
                     **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.leap_estimator = leap_estimator
            self.leap_score_tolerance = float(leap_score_tolerance)
            self._leap_gathered: Any = None
            self._leap_inputs: Any = None

        def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> Any:
            gathered = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self._leap_gathered = gathered  # every process's rows, as TRL gathers them
            return gathered

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            import torch

            self._leap_inputs = inputs  # rollout_func gets only the prompts: make_rollout_func reads the rows here
            try:
                output = super()._generate_and_score_completions(inputs)
            finally:
                self._leap_inputs = None
            per_func, self._leap_gathered = self._leap_gathered, None
            if per_func is None:
                raise RuntimeError("leap: GRPOTrainer._generate_and_score_completions did not call "
                                   "_calculate_rewards; this TRL is not the one leap.trl follows")
            weights = self.reward_weights.to(per_func.device).unsqueeze(0)
            rewards = (per_func * weights).nansum(dim=1)
            rewards[torch.isnan(per_func).all(dim=1)] = torch.nan
            training = self.model.training if getattr(self, "model", None) is not None else True
            group_size = self.num_generations if training else self.num_generations_eval
            advantages = leap_advantages(rewards.detach().cpu().double().numpy(), group_size, self.leap_estimator,
                                         self.leap_score_tolerance)
            local = len(inputs)
            start = self.accelerator.process_index * local
            local_advantages = torch.from_numpy(advantages[start:start + local])
            output["advantages"] = local_advantages.to(device=output["advantages"].device,
                                                       dtype=output["advantages"].dtype)
            self._leap_log(inputs, advantages, "train" if training else "eval")
            return output

        def _leap_log(self, inputs: Any, advantages: Any, mode: str) -> None:
            """leap's advantages where TRL logged its z-scores (the completions table; grpo_trainer.py:2757
            appends one per gathered row), and the episodes' metrics over every process's rows."""
            logs = getattr(self, "_logs", None)
            if logs is not None and "advantages" in logs:
                logged = logs["advantages"]
                for _ in range(min(len(advantages), len(logged))):
                    logged.pop()
                logged.extend(float(a) for a in advantages)
            if not inputs or "solved_turn" not in inputs[0]:
                return  # not make_rollout_func's rows
            keys = ("solved_turn", "masked", "gate", "turns")
            fields = _gather_object([{k: row.get(k) for k in keys} for row in inputs])
            metrics = getattr(self, "_metrics", None)
            if metrics is not None:
                max_turns = int(getattr(self, "_leap_max_turns", 0)) or max(int(f["turns"] or 0) for f in fields)
                for name, value in _episode_metrics(fields, max(max_turns, 1)).items():
                    metrics[mode][name].append(value)

    LeapGRPOTrainer.__module__ = __name__
    LeapGRPOTrainer.__qualname__ = "LeapGRPOTrainer"
    return LeapGRPOTrainer


def leap_reward(max_turns: int) -> Callable[..., list[Optional[float]]]:
    """A TRL reward function over make_rollout_func's extra fields: turn_and_speedup_score(solved_turn,
    max_turns, speedup), and None (unscored) for a masked row. Rank it with leap_score_tolerance =
    leap.scores.TURNS_ONLY_TOLERANCE for LEAP's published order."""

    def leap_score(*, solved_turn: Sequence[int], speedup: Sequence[float], masked: Optional[Sequence[int]] = None,
                   **kwargs: Any) -> list[Optional[float]]:
        flags = masked if masked is not None else [0] * len(solved_turn)
        return [None if m else turn_and_speedup_score(int(t), max_turns, float(s))
                for t, s, m in zip(solved_turn, speedup, flags)]

    return leap_score


@dataclass
class Generation:
    """One turn's completion for one row: its token ids, their log-probabilities (None when the generator
    gives none: the row then has none, never made-up zeros), and its text."""
    completion_ids: list[int]
    logprobs: Optional[list[float]]
    text: str


def _accepts(function: Callable[..., Any], name: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters)


def _rows_task(trainer: Any, row: int, rows_here: int) -> Any:
    inputs = getattr(trainer, "_leap_inputs", None)
    if inputs is None:
        raise TypeError("leap.trl.make_rollout_func: no task_of was given and the trainer hands over no rows: "
                        "build it with leap.trl.leap_grpo_trainer(GRPOTrainer) (TRL gives rollout_func only the "
                        "prompts; the subclass keeps the rows), or pass task_of(prompt)")
    if len(inputs) != rows_here:
        raise ValueError(f"the trainer kept {len(inputs)} rows for {rows_here} prompts")
    return rows.task_of(inputs[row])


def make_rollout_func(generate: Callable[..., Any], environment: Optional[Callable[..., Any]] = None,
                      task_of: Optional[Callable[[Any], Any]] = None, *, max_turns: int = 3,
                      t_min: Optional[int] = None, t_max: Optional[int] = None,
                      encode_prompt: Optional[Callable[[Any, Any], list[int]]] = None,
                      encode_feedback: Optional[Callable[[str, Any], list[int]]] = None,
                      feedback_template: str = DEFAULT_FEEDBACK, environment_retries: int = 1,
                      min_turn_tokens: int = 1,
                      sandbox: Optional[dict[str, Any]] = None) -> Callable[[list[Any], Any], dict[str, Any]]:
    """TRL's rollout_func(prompts, trainer) running LEAP's episode for each of this process's rows with
    leap.run_sample_episode, the rows concurrently:

    generate(context, trainer[, max_tokens=])  -> a Generation for the conversation so far (token ids; sync
                                          or async). vllm_server_generate() is one that calls TRL's vLLM
                                          server from this process; a generate that takes max_tokens gets
                                          what is left of args.max_completion_length
    environment(task, completion, key)  -> leap.Evaluation: an episode environment (leap.episode); default
                                          this process's sandbox (leap.process_sandbox, with `sandbox`'s
                                          settings: devices, executable, fleet, ...)
    task_of(prompt)                     -> the row's task; default: read from the row (leap.rows), which the
                                          leap_grpo_trainer subclass hands over

    Turn 1 for every row; the turn-1 verdicts are gathered from every process (a group of
    trainer.num_generations consecutive rows may straddle processes, as TRL's rewards do) and the gate (LEAP's
    band, or FailBandGate(t_min, t_max)) decides each group once; rows of expanded groups that failed get the
    feedback and another turn, up to max_turns, while at least min_turn_tokens of max_completion_length are
    left after the feedback. An evaluation without a verdict is made again up to environment_retries times,
    then the row is masked. Returns prompt_ids, completion_ids (the turns and the feedback between them),
    logprobs (None unless every turn of every row came with them; TRL accepts None, but its vLLM
    importance-sampling correction needs them, so that combination is refused), env_mask (0 on feedback
    tokens, and on every token of a masked row) and, for reward functions and logs, solved_turn, speedup,
    verdict, masked, gate and turns. Prompts and feedback are encoded with the trainer's chat template
    (return_dict=False, so that transformers 4 and 5 both give token ids). Called from code that runs an
    event loop (a notebook), the episodes run on a loop of their own in a helper thread."""
    if min_turn_tokens < 1:
        raise ValueError(f"min_turn_tokens ({min_turn_tokens}) must be >= 1")
    takes_max_tokens = _accepts(generate, "max_tokens")
    if sandbox is not None:
        process_sandbox.configure_from(sandbox)

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        template_kwargs = dict(getattr(trainer, "chat_template_kwargs", None) or {})
        if getattr(trainer, "chat_template", None) is not None:
            template_kwargs["chat_template"] = trainer.chat_template

        def default_encode(prompt: Any, _: Any) -> list[int]:
            if isinstance(prompt, list):
                return token_ids(tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True,
                                                               return_dict=False, **template_kwargs))
            return token_ids(tokenizer.encode(prompt), "encode")

        def default_feedback(text: str, _: Any) -> list[int]:
            return chat_suffix_ids(tokenizer, [{"role": "user", "content": text}],
                                   eos_token_id=getattr(tokenizer, "eos_token_id", None), **template_kwargs)

        encode = encode_prompt or default_encode
        feedback_ids = encode_feedback or default_feedback
        evaluate = environment or process_sandbox.environment()
        args = getattr(trainer, "args", None)
        budget = getattr(args, "max_completion_length", None) if args is not None else None
        trainer._leap_max_turns = max_turns
        count = len(prompts)
        group_size = _group_size(trainer)
        first_row = trainer.accelerator.process_index * count
        tasks = [task_of(p) if task_of is not None else _rows_task(trainer, row, count) for row, p in enumerate(prompts)]
        prompt_ids = [list(encode(p, trainer)) for p in prompts]
        completion: list[list[int]] = [[] for _ in range(count)]
        logprobs: list[list[float]] = [[] for _ in range(count)]
        mask: list[list[int]] = [[] for _ in range(count)]
        kept: list[list[bool]] = [[] for _ in range(count)]
        with_logprobs = [True] * count
        groups = _GatheredGroups(trainer, count, group_size, band_for(group_size, group_size, t_min, t_max))

        async def episode(row: int) -> Any:
            async def policy(task: Any, so_far: Any, key: SampleKey) -> Completion:
                if so_far:  # the sandbox's feedback on the last turn, env_mask 0
                    last = so_far[-1]
                    ids = list(feedback_ids(feedback_template.format(verdict=last.verdict.name,
                                                                     feedback=last.feedback), trainer))
                    if budget is not None and budget - len(completion[row]) - len(ids) < min_turn_tokens:
                        raise OutOfRoom(f"no room for turn {key.turn} within max_completion_length ({budget})")
                    completion[row].extend(ids)
                    logprobs[row].extend([0.0] * len(ids))
                    mask[row].extend([0] * len(ids))
                context = prompt_ids[row] + completion[row]
                if takes_max_tokens and budget is not None:
                    value = generate(context, trainer, max_tokens=budget - len(completion[row]))
                else:
                    value = generate(context, trainer)
                generation = await value if inspect.isawaitable(value) else value
                ids = list(generation.completion_ids)
                completion[row].extend(ids)
                if generation.logprobs is None:
                    with_logprobs[row] = False
                else:
                    logprobs[row].extend(list(generation.logprobs))
                mask[row].extend([1] * len(ids))
                kept[row].append(True)  # TRL trains the whole completion it is handed (no cut)
                return Completion(generation.text, len(ids))

            global_row = first_row + row
            return await run_sample_episode(tasks[row], policy, evaluate,
                                            coordinator=cast(Any, groups), sample=global_row % group_size,
                                            group_id=global_row // group_size, task_index=global_row // group_size,
                                            max_turns=max_turns, environment_retries=environment_retries)

        async def all_rows() -> list[Any]:
            return list(await asyncio.gather(*[episode(row) for row in range(count)]))

        if getattr(trainer, "use_vllm", False) and getattr(trainer, "vllm_mode", "server") == "server":
            # Process 0 alone pushes the new weights to the server before rollout_func (vllm_generation.py
            # sync_weights has no collective): the others wait for it here, or their first turns could be
            # sampled from the old weights. Every process calls rollout_func once a step, so this is safe.
            trainer.accelerator.wait_for_everyone()
        episodes = run_to_completion(all_rows())
        outcomes = []
        for row, ran in enumerate(episodes):
            outcome, trained = trained_outcome(ran.turns, kept[row])
            masked = any(t.environment_failure for t in ran.turns[:trained])
            if masked:  # an environment failure: no token of it is trained
                mask[row] = [0] * len(mask[row])
            outcomes.append((outcome, trained, masked))
        if all(with_logprobs):
            sampled: Optional[list[list[float]]] = logprobs
        else:
            sampled = None
            if getattr(trainer, "use_vllm", False) and getattr(trainer, "vllm_importance_sampling_correction", False):
                raise ValueError("leap.trl.make_rollout_func: generate gave no log-probs, and TRL's vLLM "
                                 "importance-sampling correction (vllm_importance_sampling_correction, on by default) "
                                 "needs them: return Generation(ids, logprobs, text) with the sampled tokens' "
                                 "log-probs (leap.trl.vllm_server_generate does), or turn the correction off")
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": sampled, "env_mask": mask,
                "solved_turn": [o.solved_turn for o, _, _ in outcomes],
                "speedup": [o.speedup for o, _, _ in outcomes],
                "verdict": [o.best_verdict.name for o, _, _ in outcomes],
                "masked": [int(m) for _, _, m in outcomes],
                "gate": [e.decision.expansion.name for e in episodes],
                "turns": [t for _, t, _ in outcomes]}

    return rollout_func


def _post_json(url: str, payload: dict[str, Any], timeout: float) -> Any:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the trainer's own server
        return json.loads(response.read())


def vllm_server_generate(base_url: Optional[str] = None, *, timeout: float = 600.0, max_concurrency: int = 64,
                         **sampling: Any) -> Callable[..., Any]:
    """A generate for make_rollout_func that calls TRL's vLLM server (``trl vllm-serve``) from this training
    process, one HTTP request per row and turn, the rows concurrently.

    TRL's own ``trainer.vllm_generation.generate`` is a collective: every process's prompts are gathered and
    only process 0 holds a client (trl/generation/vllm_generation.py:551-610), so calling it per row hangs
    (processes whose rows need different numbers of turns call it a different number of times) or pairs
    completions with the wrong rows. This one needs no collective: every process posts to the server's
    /generate/ itself. The weights are the trained ones: with ``use_vllm=True`` TRL syncs them to the server
    before every rollout_func call (grpo_trainer.py:2151-2155), from process 0 alone and with no collective, so
    make_rollout_func's function waits for every process before the first turn; that is why the trainer must
    use vLLM in server mode (``use_vllm=True, vllm_mode="server"``; anything else is refused).

    base_url: the server (default: the trainer's args.vllm_server_base_url, else vllm_server_host and
    vllm_server_port, as TRL's client). sampling: the request's fields (temperature, top_p, top_k, min_p,
    repetition_penalty, generation_kwargs), default the trainer's args. max_tokens is what is left of
    args.max_completion_length for the row. The sampled tokens' log-probs come back (logprobs=0)."""
    limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = weakref.WeakKeyDictionary()

    async def generate(context: list[int], trainer: Any, max_tokens: Optional[int] = None) -> Generation:
        if not getattr(trainer, "use_vllm", False) or getattr(trainer, "vllm_mode", "server") != "server":
            raise ValueError("leap.trl.vllm_server_generate needs GRPOConfig(use_vllm=True, vllm_mode='server'): TRL "
                             "syncs the trained weights to the vLLM server before rollout_func only then")
        args = trainer.args
        url = base_url or getattr(args, "vllm_server_base_url", None) or \
            f"http://{args.vllm_server_host}:{args.vllm_server_port}"
        fields = {name: sampling.get(name, getattr(args, name, default)) for name, default in
                  (("temperature", 1.0), ("top_p", 1.0), ("top_k", 0), ("min_p", 0.0), ("repetition_penalty", 1.0))}
        fields["min_p"] = fields["min_p"] or 0.0
        payload = {"prompts": [list(context)], "n": 1, **fields,
                   "max_tokens": int(max_tokens if max_tokens is not None else args.max_completion_length),
                   "logprobs": 0, "generation_kwargs": sampling.get("generation_kwargs",
                                                                    getattr(args, "generation_kwargs", None)) or {}}
        loop = asyncio.get_running_loop()  # each rollout may run on a loop of its own (run_to_completion)
        limiter = limiters.setdefault(loop, asyncio.Semaphore(max_concurrency))
        async with limiter:
            reply = await loop.run_in_executor(None, _post_json, url.rstrip("/") + "/generate/", payload, timeout)
        ids = [int(t) for t in reply["completion_ids"][0]]
        per_token = reply.get("logprobs")
        sampled = [float(top[0]) for top in per_token[0]] if per_token and per_token[0] is not None else None
        text = trainer.processing_class.decode(ids, skip_special_tokens=True)
        return Generation(ids, sampled, text)

    return generate


def _group_size(trainer: Any) -> int:
    training = trainer.model.training if getattr(trainer, "model", None) is not None else True
    return int(trainer.num_generations if training else trainer.num_generations_eval)


class _GatheredGroups:
    """What run_sample_episode asks of a coordinator (group_size, decide) for one process's rows of a
    TRL batch: when every local row has reported its turn-1 verdict, the verdicts of all processes are
    gathered (one collective, in process order, as TRL gathers rewards), the gate decides each group of
    group_size consecutive rows on the rows that have a verdict (a masked row reports None), and each row
    gets its group's decision."""

    def __init__(self, trainer: Any, rows: int, group_size: int, gate: Any) -> None:
        self.trainer, self.rows, self.group_size, self.gate = trainer, rows, group_size, gate
        self.first_row = trainer.accelerator.process_index * rows
        self.verdicts: dict[int, Optional[str]] = {}  # None: the environment gave the row no verdict
        self.decisions: dict[int, Any] = {}
        self.ready: Optional[asyncio.Event] = None

    def join(self, group_id: Any) -> int:
        raise RuntimeError("make_rollout_func passes each row's sample index itself")

    async def decide(self, group_id: Any, sample: int, verdict: Any, *, task_id: int = 0) -> Any:
        if self.ready is None:
            self.ready = asyncio.Event()
        self.verdicts[int(group_id) * self.group_size + sample - self.first_row] = \
            None if verdict is None else verdict.name
        if len(self.verdicts) == self.rows:
            everyone = _gather_object([self.verdicts[row] for row in range(self.rows)])
            if len(everyone) % self.group_size:
                raise ValueError(f"{len(everyone)} rows over all processes do not split into groups of "
                                 f"{self.group_size}")
            for start in range(0, len(everyone), self.group_size):
                stats = _core.group_stats([_core.Verdict.__members__[v] for v in everyone[start:start + self.group_size]
                                           if v is not None])
                expansion, reason = self.gate.assess(stats)
                self.decisions[start // self.group_size] = _core.GateDecision(expansion, reason)
            self.ready.set()
        await self.ready.wait()
        return self.decisions[int(group_id)]
