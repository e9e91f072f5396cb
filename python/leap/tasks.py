# SPDX-License-Identifier: Apache-2.0
"""The built-in task library as a trainer reads it: the tasks ``leap-sandbox tasks --json`` lists, with
their category, difficulty tier, split and prompt, and a split exported as dataset rows (leap.rows) in
JSON lines, the shape verl's RLHFDataset and TRL's GRPOTrainer read. Standard library only.

    import leap.tasks
    train = leap.tasks.list_tasks(split="train", category="gemm")
    print(train[0].name, train[0].tier, leap.tasks.prompt(train[0])[:80])
    leap.tasks.export_jsonl("train.jsonl", split="train")

or from a shell: ``python3 -m leap.tasks export --split holdout holdout.jsonl``. The program is
``executable`` where given, else ``$LEAP_SANDBOX``, else ``leap-sandbox`` on PATH. To parquet (pyarrow
is not a Debian 12 package; pip install it where you train):
``python3 -c "import pyarrow.json as j, pyarrow.parquet as p; p.write_table(j.read_json('train.jsonl'), 'train.parquet')"``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Optional, Union

from . import rows

__all__ = ["CATEGORIES", "SPLITS", "ANSWER_FORMAT", "TaskInfo", "list_tasks", "load", "prompt", "row",
           "export_jsonl"]

CATEGORIES = ("activation", "loss", "gemm", "convolution", "attention", "reduction", "scan", "norm", "pooling",
              "softmax", "inference", "elementwise")
SPLITS = ("train", "holdout")

#: What the first turn asks for beside the task's description: the shape leap.environment.extract_kernel
#: reads the answer in.
ANSWER_FORMAT = "Answer with the whole kernel in one ```cuda block."


@dataclass(frozen=True)
class TaskInfo:
    """One built-in task: its name, what the library records of it, and its whole spec (the mapping
    ``leap-sandbox tasks --json`` gives, reference source and variants included)."""
    name: str
    category: str
    tier: int
    split: str
    description: str
    spec: Mapping[str, Any] = field(repr=False, compare=False)


def _program(executable: Union[str, Sequence[str], None]) -> list[str]:
    if executable is None:
        executable = os.environ.get("LEAP_SANDBOX", "leap-sandbox")
    return [executable] if isinstance(executable, str) else list(executable)


def _check_choice(what: str, value: Optional[str], allowed: Sequence[str]) -> None:
    if value is not None and value not in allowed:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")


def _library(executable: Union[str, Sequence[str], None]) -> list[dict[str, Any]]:
    command = _program(executable) + ["tasks", "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError as e:
        raise FileNotFoundError(f"cannot run {command[0]!r} to list the tasks: set $LEAP_SANDBOX or pass "
                                f"executable= (the leap-sandbox program)") from e
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    tasks = json.loads(done.stdout)
    if not isinstance(tasks, list):
        raise RuntimeError(f"{' '.join(command)} printed {type(tasks).__name__}, expected a JSON array")
    return tasks


def _info(spec: Mapping[str, Any]) -> TaskInfo:
    return TaskInfo(name=str(spec["name"]), category=str(spec.get("category", "")), tier=int(spec.get("tier", 0)),
                    split=str(spec.get("split", "")), description=str(spec.get("description", "")), spec=spec)


def list_tasks(*, category: Optional[str] = None, tier: Optional[int] = None, split: Optional[str] = None,
               executable: Union[str, Sequence[str], None] = None) -> list[TaskInfo]:
    """The built-in tasks, in the library's order, that match every filter given. A category or split
    outside the library's names is a ValueError naming the allowed ones."""
    _check_choice("category", category, CATEGORIES)
    _check_choice("split", split, SPLITS)
    if tier is not None and tier not in (1, 2, 3):
        raise ValueError(f"tier {tier!r} is not one of 1, 2, 3")
    found = [_info(spec) for spec in _library(executable)]
    return [t for t in found if (category is None or t.category == category) and (tier is None or t.tier == tier)
            and (split is None or t.split == split)]


def load(name: str, *, executable: Union[str, Sequence[str], None] = None) -> TaskInfo:
    """The built-in task `name`; a KeyError names it when the library has no such task."""
    for task in list_tasks(executable=executable):
        if task.name == name:
            return task
    raise KeyError(f"no built-in task {name!r} (leap-sandbox tasks lists them)")


def prompt(task: TaskInfo, *, answer_format: str = ANSWER_FORMAT) -> str:
    """The first turn's text: the task's description (the signature, the launch, what to compute), then
    how to answer."""
    return f"{task.description}\n\n{answer_format}" if answer_format else task.description


def row(task: TaskInfo, *, index: Optional[int] = None, system: Optional[str] = None,
        answer_format: str = ANSWER_FORMAT) -> dict[str, Any]:
    """The dataset row of `task` (leap.rows.row): its prompt as chat messages, a system message first
    when given, the task's name as the reward function's key and its own split."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt(task, answer_format=answer_format)})
    return rows.row(task.name, messages, task.split, index=index)


def export_jsonl(out: Union[str, os.PathLike[str], IO[str]], *, split: Optional[str] = None,
                 category: Optional[str] = None, tier: Optional[int] = None, system: Optional[str] = None,
                 executable: Union[str, Sequence[str], None] = None) -> int:
    """Writes one row per chosen task (row()) as JSON lines to a path or an open text file, indexed from
    0 in the library's order; returns how many."""
    chosen = list_tasks(category=category, tier=tier, split=split, executable=executable)
    lines = [json.dumps(row(t, index=i, system=system), ensure_ascii=False) + "\n" for i, t in enumerate(chosen)]
    if isinstance(out, (str, os.PathLike)):
        with open(out, "w", encoding="utf-8") as f:
            f.writelines(lines)
    else:
        out.writelines(lines)
    return len(lines)


def _main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m leap.tasks", description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("list", "export"):
        p = sub.add_parser(name)
        p.add_argument("--category", choices=CATEGORIES)
        p.add_argument("--tier", type=int, choices=(1, 2, 3))
        p.add_argument("--split", choices=SPLITS)
        p.add_argument("--executable", help="the leap-sandbox program (default $LEAP_SANDBOX, else on PATH)")
        if name == "export":
            p.add_argument("--system", help="a system message put before every prompt")
            p.add_argument("output", help="the JSON-lines file to write ('-' for stdout)")
    args = parser.parse_args(argv)
    if args.command == "list":
        for t in list_tasks(category=args.category, tier=args.tier, split=args.split, executable=args.executable):
            print(f"{t.name}\t{t.category}\ttier {t.tier}\t{t.split}")
        return 0
    target: Union[str, IO[str]] = sys.stdout if args.output == "-" else args.output
    n = export_jsonl(target, split=args.split, category=args.category, tier=args.tier, system=args.system,
                     executable=args.executable)
    print(f"{n} rows written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
