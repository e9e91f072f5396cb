# SPDX-License-Identifier: Apache-2.0
"""The dataset row of a kernel task, one shape for verl and TRL, and the task read back from what each
trainer hands a reward function or an agent loop, so that a run needs no dataset or reward glue.

    import json, leap.rows
    with open("train.jsonl", "w") as f:
        for task, prompt in my_tasks:           # built-in names or spec mappings (leap.tasks exports the library)
            f.write(json.dumps(leap.rows.row(task, [{"role": "user", "content": prompt}], "train")) + "\\n")

A row (``row(task, prompt, split)``):

    {"prompt":       [{"role": "user", "content": ...}, ...],     chat messages
     "data_source":  "leap/kernels",
     "reward_model": {"style": "rule", "ground_truth": TASK},
     "extra_info":   {"split": SPLIT, "leap_task": TASK[, "index": I]},
     "leap_task":    TASK}

TASK is a built-in task's name ("softmax") or a task spec (docs/task-json.md) written as JSON text, so
that every row's column has one type (Arrow, and so parquet and ``datasets``, refuse a column that mixes
strings and objects). What each trainer does with the row, at the commits the adapters follow:

  * verl (1dda039, RLHFDataset, verl/utils/dataset/rl_dataset.py:386-411): ``prompt`` is
    ``data.prompt_key``'s default and becomes ``raw_prompt``; ``extra_info`` gives ``index`` and
    ``tools_kwargs``; every column reaches the agent loop's run() as a keyword, and the reward loop hands
    a reward function ``data_source``, ``reward_model["ground_truth"]`` and ``extra_info``
    (verl/experimental/reward_loop/reward_manager/naive.py:42-80). ``data_source`` also keys verl's
    validation metrics.
  * TRL (f2cd577, GRPOTrainer): ``prompt`` is the one required column; every other column reaches each
    reward function as a keyword holding one value per row (grpo_trainer.py:1612-1618), so
    ``leap_task`` is a list of tasks there. rollout_func is handed only the prompts
    (grpo_trainer.py:2160); leap.trl's trainer subclass keeps the rows of the batch for it.

``task_of(fields)`` reads the task from any of these: a row, the keywords verl's agent loop gets, a
reward function's ``extra_info`` and ``ground_truth`` (as a mapping), or one row of TRL's inputs. It
returns the name, or the spec parsed back into a mapping.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

__all__ = ["DATA_SOURCE", "Task", "row", "task_of", "parse_task"]

DATA_SOURCE = "leap/kernels"

#: A sandbox task: a built-in name or a spec mapping (docs/task-json.md).
Task = Union[str, Mapping[str, Any]]


def _task_text(task: Task) -> str:
    if isinstance(task, str):
        if not task.strip():
            raise ValueError("task is empty: pass a built-in task's name or a task spec")
        return task
    if isinstance(task, Mapping):
        return json.dumps(task, sort_keys=True)
    raise TypeError(f"task must be a built-in task's name or a spec mapping, got {type(task).__name__}")


def _messages(prompt: Union[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    messages = [dict(message) for message in prompt]
    if not messages:
        raise ValueError("prompt has no messages")
    for i, message in enumerate(messages):
        if "role" not in message or "content" not in message:
            raise ValueError(f"prompt message {i} ({message!r}) needs a 'role' and a 'content'")
    return messages


def row(task: Task, prompt: Union[str, Sequence[Mapping[str, Any]]], split: str, *, index: Optional[int] = None,
        data_source: str = DATA_SOURCE) -> dict[str, Any]:
    """The dataset row of one prompt for `task` (a built-in name or a spec mapping): prompt as chat
    messages (a string becomes one user message), the task in ``reward_model.ground_truth``,
    ``extra_info.leap_task`` and ``leap_task``, the split in ``extra_info.split`` and, when given,
    the row's index in ``extra_info.index`` (verl's trajectory traces key samples by it)."""
    text = _task_text(task)
    extra: dict[str, Any] = {"split": str(split), "leap_task": text}
    if index is not None:
        extra["index"] = int(index)
    return {"prompt": _messages(prompt), "data_source": data_source,
            "reward_model": {"style": "rule", "ground_truth": text}, "extra_info": extra, "leap_task": text}


def parse_task(value: Any) -> Task:
    """A task as a row holds it, back to what the sandbox takes: a spec's JSON text becomes a mapping, a
    name stays a name, a mapping stays a mapping."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a task: {value!r} (expected a built-in task's name or a spec)")
    text = value.strip()
    if text.startswith("{"):
        spec = json.loads(text)
        if not isinstance(spec, Mapping):
            raise ValueError(f"a task spec must be a JSON object, got {text[:60]!r}")
        return spec
    return text


def task_of(fields: Mapping[str, Any]) -> Task:
    """The task of a row, read from whatever the trainer hands over: ``extra_info["leap_task"]``, else
    ``leap_task``, else ``reward_model["ground_truth"]``, else ``ground_truth`` (a reward function's own
    argument). A KeyError names the keys looked for when none holds one."""
    extra = fields.get("extra_info")
    if isinstance(extra, Mapping) and extra.get("leap_task") is not None:
        return parse_task(extra["leap_task"])
    if fields.get("leap_task") is not None:
        return parse_task(fields["leap_task"])
    reward_model = fields.get("reward_model")
    if isinstance(reward_model, Mapping) and reward_model.get("ground_truth") is not None:
        return parse_task(reward_model["ground_truth"])
    if fields.get("ground_truth") is not None:
        return parse_task(fields["ground_truth"])
    raise KeyError(f"no task in this row (keys {sorted(fields)}): leap reads extra_info['leap_task'], 'leap_task', "
                   f"reward_model['ground_truth'] or 'ground_truth'; build rows with leap.rows.row(task, prompt, split)")
