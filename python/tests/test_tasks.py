# SPDX-License-Identifier: Apache-2.0
"""leap.tasks: the built-in library as `leap-sandbox tasks --json` lists it (the program the build made,
$LEAP_SANDBOX), its filters, prompts, and a split exported as JSON lines that the json module loads and
that leap.rows reads back, in the row shape verl's RLHFDataset and TRL's GRPOTrainer take (modelled in
verl_model.rlhf_dataset_item)."""
import io
import json
import os
import subprocess
import sys

import pytest

import leap.rows
import leap.tasks
import verl_model

pytestmark = pytest.mark.skipif(not os.environ.get("LEAP_SANDBOX"), reason="needs the leap-sandbox program")


def test_the_library_lists_every_category_with_its_metadata_and_a_stable_split():
    tasks = leap.tasks.list_tasks()
    assert len(tasks) >= 120
    assert {t.category for t in tasks} == set(leap.tasks.CATEGORIES)
    assert all(t.tier in (1, 2, 3) and t.split in leap.tasks.SPLITS and t.description for t in tasks)
    names = [t.name for t in tasks]
    assert len(set(names)) == len(names)
    # The split is part of each task, not drawn: two listings agree task by task.
    again = {t.name: t.split for t in leap.tasks.list_tasks()}
    assert again == {t.name: t.split for t in tasks}
    holdout = [t for t in tasks if t.split == "holdout"]
    assert 0.05 * len(tasks) <= len(holdout) <= 0.2 * len(tasks)


def test_filters_choose_the_same_tasks_as_the_program_and_a_bad_value_is_named():
    gemm = leap.tasks.list_tasks(category="gemm")
    assert gemm and all(t.category == "gemm" for t in gemm)
    program = json.loads(subprocess.run([os.environ["LEAP_SANDBOX"], "tasks", "--json", "--category", "gemm"],
                                        capture_output=True, text=True, check=True).stdout)
    assert [t.name for t in gemm] == [t["name"] for t in program]
    tier1_train = leap.tasks.list_tasks(tier=1, split="train")
    assert tier1_train and all(t.tier == 1 and t.split == "train" for t in tier1_train)
    with pytest.raises(ValueError, match="category 'gemms' is not one of activation"):
        leap.tasks.list_tasks(category="gemms")
    with pytest.raises(ValueError, match="tier 4"):
        leap.tasks.list_tasks(tier=4)


def test_load_gives_the_spec_and_the_prompt_asks_for_a_fenced_kernel():
    softmax = leap.tasks.load("softmax")
    assert softmax.category == "softmax" and softmax.spec["entry"] == "softmax"
    assert "__global__" in softmax.spec["reference"]
    text = leap.tasks.prompt(softmax)
    assert text.startswith(softmax.description)
    assert text.endswith(leap.tasks.ANSWER_FORMAT)
    with pytest.raises(KeyError, match="no built-in task 'softmaxx'"):
        leap.tasks.load("softmaxx")


def test_a_missing_program_is_named():
    with pytest.raises(FileNotFoundError, match="LEAP_SANDBOX"):
        leap.tasks.list_tasks(executable="/nonexistent/leap-sandbox")


def test_the_export_loads_with_json_and_reads_back_through_the_trainers(tmp_path):
    path = tmp_path / "holdout.jsonl"
    n = leap.tasks.export_jsonl(path, split="holdout", system="You write CUDA kernels.")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert n == len(lines) == len(leap.tasks.list_tasks(split="holdout")) > 0
    for i, line in enumerate(lines):
        row = json.loads(line)
        assert set(row) >= {"prompt", "data_source", "reward_model", "extra_info", "leap_task"}
        assert row["data_source"] == leap.rows.DATA_SOURCE
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["prompt"][0]["content"] == "You write CUDA kernels."
        assert row["extra_info"] == {"split": "holdout", "leap_task": row["leap_task"], "index": i}
        task = leap.tasks.load(row["leap_task"])
        assert row["prompt"][1]["content"] == leap.tasks.prompt(task)
        assert leap.rows.task_of(row) == task.name
        # verl's RLHFDataset item, and the reward loop's arguments, give the same task back.
        item = verl_model.rlhf_dataset_item(row)
        assert leap.rows.task_of(item) == task.name


def test_the_module_exports_from_a_shell(tmp_path):
    out = tmp_path / "train.jsonl"
    done = subprocess.run([sys.executable, "-m", "leap.tasks", "export", "--split", "train", "--category", "scan",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["extra_info"]["split"] == "train" for r in rows)
    assert {r["leap_task"] for r in rows} == {t.name for t in leap.tasks.list_tasks(category="scan", split="train")}
    buffer = io.StringIO()
    assert leap.tasks.export_jsonl(buffer, category="scan", split="train") == len(rows)


# ---- leap-sandbox tasks dump: one trial as .npy files, checked with numpy alone ------------------------

np = pytest.importorskip("numpy")


def dump(tmp_path, task, size_set, seed=None):
    out = tmp_path / f"{task}-{size_set}"
    command = [os.environ["LEAP_SANDBOX"], "tasks", "dump", task, "--size-set", str(size_set),
               "--cache-dir", str(tmp_path / "cache"), str(out)]
    if seed is not None:
        command[4:4] = ["--seed", str(seed)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "(oracle: agrees)" in done.stdout
    return out, json.loads((out / "trial.json").read_text())


def test_a_dump_loads_in_numpy_and_numpy_agrees_with_the_reference(tmp_path):
    out, trial = dump(tmp_path, "softmax", 0)
    assert trial["task"] == "softmax" and trial["sizes"] == {"rows": 5, "cols": 1000}
    assert trial["oracle"] == "agrees"
    x = np.load(out / "inputs" / "x.npy")
    y = np.load(out / "outputs" / "out.npy")
    assert x.dtype == np.float32 and x.shape == (5, 1000) and y.shape == (5, 1000)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    assert np.allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)
    assert trial["scalars"] == {"rows": 5, "cols": 1000}
    # Another seed is another trial; the same seed the same one.
    other, _ = dump(tmp_path, "softmax", 0, seed=2)
    assert not np.array_equal(np.load(other / "inputs" / "x.npy"), x)
    same, _ = dump(tmp_path, "softmax", 0, seed=1)
    assert np.array_equal(np.load(same / "inputs" / "x.npy"), x)


def test_half_types_keep_their_values(tmp_path):
    out, trial = dump(tmp_path, "gelu_fp16", 1)
    assert np.load(out / "inputs" / "x.npy").dtype == np.float16
    out, trial = dump(tmp_path, "gelu_bf16", 0)
    x = np.load(out / "inputs" / "x.npy")
    described = [b for b in trial["buffers"] if b["name"] == "x"][0]["input"]
    assert described["dtype"] == "bfloat16" and described["numpy"] == "<f4" and x.dtype == np.float32
    # Every value is a bfloat16: its low 16 bits are zero.
    assert not np.any(x.view(np.uint32) & 0xFFFF)


def test_the_reduced_timing_size_is_the_last_size_set_and_one_past_it_is_refused(tmp_path):
    spec = leap.tasks.load("softmax").spec
    last = len(spec["check_sizes"])
    _, trial = dump(tmp_path, "softmax", last)
    assert trial["label"].startswith("timing (reduced)")
    done = subprocess.run([os.environ["LEAP_SANDBOX"], "tasks", "dump", "softmax", "--size-set", str(last + 1),
                           "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "x")], capture_output=True, text=True)
    assert done.returncode == 1
    assert f"task 'softmax' has size sets 0 to {last}" in done.stderr
    missing = subprocess.run([os.environ["LEAP_SANDBOX"], "tasks", "dump", "softmax", str(tmp_path / "y")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "--size-set N is required" in missing.stderr


def test_an_int8_dump_is_int8_and_numpy_dequantises_as_the_reference(tmp_path):
    out, trial = dump(tmp_path, "dequantize_int8", 0)
    q = np.load(out / "inputs" / "q.npy")
    scale = np.load(out / "inputs" / "scale.npy")
    assert q.dtype == np.int8 and q.min() >= -127 and q.max() <= 127
    assert [b for b in trial["buffers"] if b["name"] == "q"][0]["input"]["numpy"] == "|i1"
    assert np.allclose(np.load(out / "outputs" / "out.npy"), q.astype(np.float32) * scale[:, None], rtol=1e-6, atol=0)
