# SPDX-License-Identifier: Apache-2.0
"""leap's verl agent loop through verl's process model, modelled in verl_model.py after verl-project/verl at
commit 1dda039b9c6311889a9c9a26040677e1254814f9: the task runner and the agent-loop workers are processes
of their own; the v1 trainer runs a prompt's sessions in one worker (agent_loop_tq.py:107-129), the legacy
one splits the repeated batch (agent_loop.py:1201-1220); validation runs val_kwargs.n sessions
(trainer_base.py:414-420, 961-1114); the rollout server's max_tokens rule (vllm_async_server.py:566-597);
the response cut at response_length (agent_loop.py:698-744). Exercised: DCP decisions per group, the
response budget, the sandbox's address, multi_modal_data, logs. Not exercised: a real verl, Ray, vLLM, a
tokenizer, the real sandbox (scripted stand-ins)."""
import math
import sys

import numpy as np
import pytest

import leap
import leap.verl
import leap.verl_agent
import verl_runs
from verl_runs import (AGENT_LOOP_ENTRY, C, MAX_TURNS, N, check_groups, documented_overrides, infos, launcher_env,
                       result_of, run, trainer_config)

verl_site = pytest.fixture(scope="module", autouse=True)(verl_runs.verl_site)


# ---- the agent loop through verl's v1 trainer ----------------------------------------------------------

def test_agent_loop_through_verls_v1_trainer(tmp_path):
    """v1 sends whole prompts to workers (agent_loop_tq.py:243-257) and runs each prompt's n sessions there:
    every group is gated whole, whatever the batch size and worker count (4 prompts, 3 workers)."""
    workers = 3
    tasks = ["easy", "band", "hopeless", "edge"]
    config = trainer_config(tmp_path, workers=workers, overrides=documented_overrides())
    result = result_of(run(config, tasks))
    check_groups(result["records"], tasks, lambda size: leap.FailBandGate.leap_default(size))
    assert not result["warnings"] and not any(i["partial_group"] for i in infos(result["records"]))
    # The score on the last response token is the encoding of (solved turn, speedup); feedback
    # tokens (after an unsolved turn 1 of an expanded group) have response_mask 0.
    for record, fields, scores in zip(result["records"], infos(result["records"]), result["rm_scores"]):
        expected = leap.verl.turn_and_speedup_score(fields["solved_turn"], MAX_TURNS,
                                                    None if math.isnan(fields["speedup"]) else fields["speedup"])
        assert float(scores.sum()) == pytest.approx(expected, abs=1e-4)
        mask = record["response_mask"]
        assert record["num_turns"] == 2 * fields["turns"]
        assert (0 in mask) == (fields["turns"] > 1)
        assert record["multi_modal_data"] == {}
        assert record["rollout_log_probs"] is not None and len(record["rollout_log_probs"]) == len(mask)
        if fields["turns"] > 1:
            feedback = "".join(chr(t) for t, m in zip(record["response_ids"], mask) if m == 0)
            assert "[sandbox]" in feedback
    metrics = leap.verl_agent.step_metrics({k: np.array([f[k] for f in infos(result["records"])])
                                           for k in infos(result["records"])[0]}, MAX_TURNS)
    solved = np.array([f["solved_turn"] for f in infos(result["records"])])
    assert metrics["leap/solved@1"] == pytest.approx(np.mean(solved == 1))
    assert metrics[f"leap/solved@{MAX_TURNS}"] == pytest.approx(np.mean(solved > 0))


def test_the_legacy_trainer_splits_groups_and_says_so(tmp_path):
    """trainer.use_v1=False (main_ppo_v0): the repeated batch in equal chunks; 3 prompts x 8 over 2 workers
    split one group, whose parts are gated alone with the band scaled, and a warning names the settings."""
    tasks = ["easy", "band", "hopeless"]
    config = trainer_config(tmp_path, overrides=documented_overrides(), use_v1=False)
    result = result_of(run(config, tasks))
    split = [f for f in infos(result["records"]) if f["partial_group"]]
    assert len(split) == N and any("agent-loop worker" in w and "use_v1" in w for w in result["warnings"])


def test_validation_groups_by_val_kwargs_n(tmp_path):
    """Validation runs val_kwargs.n sessions per prompt (agent_loop_tq.py:115), 1 by default: a group of
    one has no gate (single-turn) and is no 'partial group' of rollout.n; n = 4 is gated as a group of 4."""
    tasks = ["band", "edge"]
    result = result_of(run(trainer_config(tmp_path, overrides=documented_overrides()), ["easy"], val_tasks=tasks))
    validation = result["validation"]
    assert not validation["warnings"], validation["warnings"]
    fields = infos(validation["records"])
    assert len(fields) == len(tasks)
    assert {f["gate"] for f in fields} == {"prune_budget"} and {f["gate_reason"] for f in fields} == {"never_expand"}
    assert all(f["turns"] == 1 and f["partial_group"] == 0 for f in fields)
    assert validation["metrics"]["solved_turn"] == pytest.approx(np.mean([f["solved_turn"] for f in fields]))
    four = result_of(run(trainer_config(tmp_path, overrides=documented_overrides(), val_n=4), ["easy"],
                         val_tasks=tasks))["validation"]
    assert not four["warnings"]
    check_groups(four["records"], tasks, lambda size: leap.FailBandGate.leap_default(size))


LONG = 700  # characters (= tokens) of a long completion


def test_the_outcome_counts_only_trained_turns(tmp_path):
    """verl's server lets every call generate min(response_length, prompt_length + response_length -
    len(prompt)) tokens (vllm_async_server.py:586-590), and the response is cut at response_length
    (agent_loop.py:730-744): a turn 2 past it must not be paid as 'solved at turn 2'."""
    plans = {"long": [[("compile_error", None, LONG), (C, 2.0, 300)]] * 4 + [[(C, 1.0, 200)]] * 4}
    config = trainer_config(tmp_path, overrides=documented_overrides(), response_length=1200)
    result = result_of(run(config, ["long"], plans))
    for record, fields in zip(result["records"], infos(result["records"])):
        mask, response = record["response_mask"], record["response_ids"]
        assert len(response) <= 1200
        # the assistant turns in the trained tokens, complete (both fences) or not
        text, turns = "", []
        for token, m in zip(response, mask):
            if m:
                text += chr(token)
            elif text:
                turns.append(text)
                text = ""
        turns.append(text) if text else None
        if fields["solved_turn"]:
            solved = turns[fields["solved_turn"] - 1]
            assert solved.count("```") == 2 and ": correct" in solved, (fields, turns)
        assert fields["turns"] <= len(turns)
    assert all(call["max_tokens"] <= 1200 for call in result["calls"])


def test_the_sandbox_address_comes_from_the_agent_loop_entry(tmp_path):
    """Agent-loop workers hold no GPU: Ray leaves them an empty CUDA_VISIBLE_DEVICES. The entry's `sandbox`
    settings place the leap-sandbox servers on the GPUs named there."""
    seen = tmp_path / "devices.txt"
    serve = tmp_path / "serve.py"
    serve.write_text(DEVICE_SERVE)
    entry = dict(AGENT_LOOP_ENTRY, environment="leap.verl_agent:sandbox", max_turns=1,
                 sandbox={"executable": [sys.executable, str(serve)], "devices": [3, 5]})
    config = trainer_config(tmp_path, overrides=documented_overrides(), entry=entry, workers=1)
    env = launcher_env(LEAP_TEST_DEVICES_FILE=str(seen))
    result = result_of(run(config, ["edge"], env=env))
    assert {f["verdict"] for f in infos(result["records"])} == {"correct", "timeout"}
    assert set(seen.read_text().split()) == {"3", "5"}


DEVICE_SERVE = r'''
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    with open(os.environ["LEAP_TEST_DEVICES_FILE"], "a") as f:
        f.write(os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>") + "\n")
    verdict = request["source"].split(": ", 1)[1].split()[0]
    reply = {"id": request["id"], "ok": True, "result": {"status": "verdict", "verdict": verdict, "speedup": 1.0,
                                                         "feedback": ""}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
'''


def test_a_worker_with_a_processor_gets_multi_modal_data_it_can_read(tmp_path):
    """A checkpoint with a processor (a VLM): verl reads output.multi_modal_data.get("images") (agent_loop.py:648
    at b178a3cd, guarded by `or {}` at 1dda039): leap's loop returns {} as verl's own loops do."""
    result = result_of(run(trainer_config(tmp_path, overrides=documented_overrides()), ["easy"], processor="vlm"))
    assert all(record["multi_modal_data"] == {} for record in result["records"])
