# SPDX-License-Identifier: Apache-2.0
"""leap.rows: one row shape for verl and TRL, built for every built-in task (sandbox/tasks), written as
JSON lines, read by the trainers as they read rows (verl's RLHFDataset.__getitem__ at verl-project/verl
1dda039, verl/utils/dataset/rl_dataset.py:386-411, modelled in verl_model.rlhf_dataset_item; verl's reward
loop hands a reward function data_source, ground_truth and extra_info, reward_manager/naive.py:42-80; TRL
f2cd577 hands every column but prompt to reward functions as a list per column, grpo_trainer.py:1612-1618),
and the task read back from each."""
import json
import os
from pathlib import Path

import pytest

import leap.rows
import verl_model

SOURCE = Path(os.environ.get("LEAP_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def builtin_tasks():
    tasks = sorted(p.parent.name for p in (SOURCE / "sandbox" / "tasks").glob("*/*/task.json"))
    assert {"softmax", "matmul", "layernorm"} <= set(tasks), tasks
    return tasks


def test_rows_for_every_builtin_task_read_back_through_each_trainer(tmp_path):
    tasks = builtin_tasks()
    spec = json.loads((SOURCE / "sandbox" / "tasks" / "softmax" / "softmax" / "task.json").read_text())
    spec["name"] = "softmax_copy"
    lines = tmp_path / "train.jsonl"
    with open(lines, "w") as f:
        for i, task in enumerate(tasks + [spec]):
            f.write(json.dumps(leap.rows.row(task, f"Write the kernel for {i}", "train", index=i)) + "\n")
    rows = [json.loads(line) for line in lines.read_text().splitlines()]
    # Every column holds one type in every row (Arrow, and so parquet and `datasets`, need it).
    for column in ("prompt", "data_source", "reward_model", "extra_info", "leap_task"):
        assert len({type(row[column]).__name__ for row in rows}) == 1, column
    assert all(isinstance(row["reward_model"]["ground_truth"], str) for row in rows)
    expected = tasks + [spec]
    # verl: RLHFDataset's item, whose columns become the agent loop's keywords.
    items = [verl_model.rlhf_dataset_item(row) for row in rows]
    assert [item["raw_prompt"] for item in items] == [row["prompt"] for row in rows]
    assert [item["index"] for item in items] == list(range(len(rows)))
    assert [leap.rows.task_of(item) for item in items] == expected
    # verl's reward loop: compute_score(data_source, solution_str, ground_truth, extra_info)
    assert [leap.rows.task_of({"ground_truth": row["reward_model"]["ground_truth"], "extra_info": row["extra_info"]})
            for row in rows] == expected
    assert [leap.rows.task_of({"ground_truth": row["reward_model"]["ground_truth"]}) for row in rows] == expected
    # TRL: every column but the prompt, one list per column, to reward functions; a row of inputs to rollout_func.
    columns = {key: [row[key] for row in rows] for key in rows[0] if key != "prompt"}
    assert [leap.rows.parse_task(task) for task in columns["leap_task"]] == expected
    assert [leap.rows.task_of(row) for row in rows] == expected


def test_a_row_names_what_is_wrong():
    with pytest.raises(ValueError, match="task is empty"):
        leap.rows.row(" ", "prompt", "train")
    with pytest.raises(TypeError, match="built-in task's name or a spec mapping"):
        leap.rows.row(3, "prompt", "train")
    with pytest.raises(ValueError, match="needs a 'role' and a 'content'"):
        leap.rows.row("softmax", [{"content": "hi"}], "train")
    with pytest.raises(KeyError, match="extra_info\\['leap_task'\\]"):
        leap.rows.task_of({"prompt": []})
    assert leap.rows.row("softmax", "hi", "test")["prompt"] == [{"role": "user", "content": "hi"}]
