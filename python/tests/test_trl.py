# SPDX-License-Identifier: Apache-2.0
"""leap.trl through TRL's GRPOTrainer across training processes, modelled in trl_model.py after
huggingface/trl at commit f2cd57710ae345ea6428ae95363267fcf38a3dc8: each rank a spawned process whose
accelerate collectives meet at a barrier; _generate with rollout_func (grpo_trainer.py:2143-2258, the vLLM
weights synced first: 2151-2155), _calculate_rewards (1612-1700), _generate_and_score_completions
(2260-2830: the group z-score, the process's slice, the logged advantages, the vLLM importance-sampling
ratio, which needs the rollout's log-probs), VLLMGeneration.generate as a collective in server mode
(trl/generation/vllm_generation.py:551-610), TRL's vLLM server's /generate/ (vllm_client.py:204-296), and a
transformers 5 tokenizer (apply_chat_template returns a BatchEncoding unless return_dict=False). Exercised:
leap_grpo_trainer's advantages over a group that straddles the processes and what it logs,
make_rollout_func's episodes (leap.run_sample_episode per row, tasks from leap.rows), gathered DCP
decisions, env_mask, log-probs, vllm_server_generate. Not exercised: a real TRL, accelerate, vLLM, a model
or the loss; TRL's eval mode; async reward funcs."""
import math

import numpy as np
import pytest
import torch

import leap
import leap.environment
import leap.rows
import leap.scores
import leap.trl
import trl_model

PROCESSES, LOCAL_ROWS, G, MAX_TURNS = 2, 6, 4, 3
C = "correct"
# Rows 0-3 alpha (process 0), 4-7 beta (straddles: 4, 5 on process 0; 6, 7 on process 1), 8-11 gamma.
PLANS = {
    "alpha": [[(C, 1.0)], [(C, 2.0)], [(C, 1.2)], [("compile_error", None), (C, 1.0)]],  # 1 fail: easy
    "beta": [[(C, 1.5)], [("compile_error", None), (C, 2.0)], [("wrong_answer", None), (C, 0.7)],
             [("compile_error", None), ("compile_error", None), (C, 1.1)]],             # 3 fail: expand
    "gamma": [[("timeout", None), (C, 1.0)]] * 4,                                         # 4 fail: catastrophic
}
TASKS = ["alpha", "beta", "gamma"]


def dataset_rows():
    """The batch's rows, as leap.rows builds them (TRL's inputs: every column reaches the reward functions)."""
    return [leap.rows.row(task, [{"role": "user", "content": f"Write the kernel for {task} #{k}"}], "train")
            for task in TASKS for k in range(G)]


# ---- what each training process runs (importable: a closure cannot cross into a spawned process) -------

def scripted_completion(context, plans):
    text = "".join(chr(i) for i in context)
    task, member = text.split("kernel for ", 1)[1].split("<", 1)[0].split(" #")
    turn = text.count("<user>")
    plan = plans[task][int(member)]
    verdict, speedup = plan[min(turn, len(plan)) - 1]
    return trl_model.completion_text(task, member, turn, verdict, speedup)


def make_generate(scenario):
    """The policy: scripted from the plans; sync or async; with or without log-probs; or one of TRL's vLLM paths."""
    kind = scenario.get("generate", "scripted")
    if kind == "vllm_server":
        return leap.trl.vllm_server_generate()
    if kind == "trl_collective":  # what the docs used to suggest: 'your vLLM call' per row
        def collective(context, trainer):
            _, ids, logprobs, _ = trainer.vllm_generation.generate([context], None, 1)
            return leap.trl.Generation(ids[0], [lp[0] for lp in logprobs[0]], trainer.processing_class.decode(ids[0]))
        return collective
    with_logprobs = scenario.get("logprobs", True)

    async def generate(context, trainer):
        completion = scripted_completion(context, scenario["plans"])
        ids = [ord(c) for c in completion]
        return leap.trl.Generation(ids, [-0.25] * len(ids) if with_logprobs else None, completion)
    return generate


async def scripted_environment(task, completion, key):
    source = leap.environment.extract_kernel(completion.text).source
    verdict, speedup, _, turn, _, member = source.split("// ", 1)[1].split()[:6]
    assert (key.turn, key.sample) == (int(turn), int(member))  # the key names this row's turn and member
    assert task == completion.text.split("task ", 1)[1].split()[0]  # the row's task, read from its row
    if verdict == "lost":  # a dead-lettered request, on every attempt
        return leap.Evaluation.environment_failed("dead-lettered")
    return leap.Evaluation(leap.Verdict.__members__[verdict], math.nan if speedup == "None" else float(speedup),
                           f"[sandbox] {verdict}")


def build_step(rank, accelerator, utils, scenario):
    """One process's _generate_and_score_completions on its slice of the batch; returns what the tests read."""
    task_of = (lambda prompt: prompt[0]["content"].split("for ", 1)[1].split(" #")[0]) if scenario.get("task_of") else None
    rollout = leap.trl.make_rollout_func(make_generate(scenario), scripted_environment, task_of, max_turns=MAX_TURNS)
    base = trl_model.GRPOTrainer
    trainer_class = leap.trl.leap_grpo_trainer(base) if scenario.get("trainer", "leap") == "leap" else base
    recorded = {}

    class Recording(trainer_class):
        def _generate(self, prompts):
            result = super()._generate(prompts)
            recorded["generate"] = result
            return result

    kwargs = scenario.get("trainer_kwargs", {})
    trainer = Recording(reward_funcs=[leap.trl.leap_reward(MAX_TURNS)], args=trl_model.grpo_args(**scenario.get("args", {})),
                        rollout_func=rollout, accelerator=accelerator,
                        processing_class=trl_model.CharTokenizer(scenario.get("batch_encoding", False)), utils=utils,
                        vllm_base_url=scenario.get("vllm_base_url"), **kwargs)
    rows = dataset_rows()[rank * LOCAL_ROWS:(rank + 1) * LOCAL_ROWS]
    step = lambda: trainer._generate_and_score_completions([dict(row) for row in rows])  # noqa: E731
    output = trl_model.run_in_event_loop(step) if scenario.get("in_event_loop") else step()
    prompt_ids, completion_ids, tool_mask, completions, logprobs, extra = recorded["generate"]
    return {"advantages": output["advantages"].tolist(), "prompt_ids": prompt_ids, "completion_ids": completion_ids,
            "tool_mask": tool_mask, "completions": completions, "logprobs": logprobs, "extra": extra,
            "logged_advantages": list(trainer._logs["advantages"]),
            "metrics": {k: list(v) for k, v in trainer._metrics["train"].items()}}


def run(**scenario):
    scenario = {"build": "test_trl:build_step", "plans": PLANS, **scenario}
    return trl_model.run_ranks(scenario, world=PROCESSES)


def expected():
    """Per global row: (gate, solved turn, speedup) with DCP deciding each whole group."""
    result = []
    for task in TASKS:
        plans = PLANS[task]
        n_fail = sum(plan[0][0] != C for plan in plans)
        expansion = leap.FailBandGate.leap_default(G).decide(n_fail, G)
        for plan in plans:
            solved, speedup = 0, math.nan
            for turn in range(1, (MAX_TURNS if expansion == leap.Expansion.expand else 1) + 1):
                verdict, s = plan[min(turn, len(plan)) - 1]
                if verdict == C:
                    solved, speedup = turn, s
                    break
            result.append((expansion.name, solved, speedup))
    return result


def reference_advantages():
    plan = expected()
    solved = np.array([p[1] for p in plan], dtype=np.int32)
    speedup = np.array([p[2] for p in plan])
    return leap.rank_advantages(solved, np.arange(len(plan)) // G, speedup=speedup, order=leap.KernelOrder.turns_only())


@pytest.fixture(scope="module")
def leap_run():
    """The leap trainer's step over both processes, tasks read from the rows (no task_of)."""
    return run(trainer_kwargs={"leap_score_tolerance": leap.scores.TURNS_ONLY_TOLERANCE})


def test_leap_advantages_over_a_group_straddling_processes(leap_run):
    got = np.array([a for rank in leap_run for a in rank["advantages"]])
    np.testing.assert_allclose(got, reference_advantages(), rtol=0, atol=1e-6)
    # The straddling group (rows 4-7) sums to 0 over both processes' slices, and is not all ties.
    assert abs(got[4:8].sum()) < 1e-6 and np.abs(got[4:8]).max() > 0
    # The base trainer's z-score differs: the subclass replaced it.
    base = np.array([a for rank in run(trainer="base", task_of=True) for a in rank["advantages"]])
    assert not np.allclose(base, got, atol=1e-3)


def test_the_rows_task_reaches_the_rollout_without_a_task_of(leap_run):
    """TRL hands rollout_func only the prompts (grpo_trainer.py:2160); the subclass keeps the rows, so no
    task_of is needed: the environment checked each row's task against its row's."""
    assert [t for rank in leap_run for t in rank["extra"]["solved_turn"]] == [p[1] for p in expected()]


def test_leaps_advantages_and_gate_metrics_are_logged(leap_run):
    """TRL logs its own z-scores in the completions table (grpo_trainer.py:2757): the subclass logs leap's, and
    the episodes' metrics, over every process's rows."""
    reference = reference_advantages()
    for rank in leap_run:
        np.testing.assert_allclose(rank["logged_advantages"], reference, atol=1e-6)
        metrics = rank["metrics"]
        solved = np.array([p[1] for p in expected()])
        assert metrics["leap/solved@1"] == pytest.approx([np.mean(solved == 1)])
        assert metrics[f"leap/solved@{MAX_TURNS}"] == pytest.approx([np.mean(solved > 0)])
        assert metrics["leap/expanded_samples"] == pytest.approx([G / len(solved)])
        assert metrics["leap/masked_samples"] == [0.0]


def test_rollout_func_gathers_turn_one_for_the_gate_and_masks_feedback(leap_run):
    plan = expected()
    for rank, result in enumerate(leap_run):
        extra = result["extra"]
        for local in range(LOCAL_ROWS):
            row = rank * LOCAL_ROWS + local
            gate, solved, speedup = plan[row]
            assert extra["gate"][local] == gate, (row, extra["gate"][local], gate)
            assert extra["solved_turn"][local] == solved
            assert (math.isnan(extra["speedup"][local]) and math.isnan(speedup)) or extra["speedup"][local] == speedup
            mask = result["tool_mask"][local]
            assert len(mask) == len(result["completion_ids"][local]) == len(result["logprobs"][local])
            feedback = "".join(chr(t) for t, m in zip(result["completion_ids"][local], mask) if m == 0)
            turns = extra["turns"][local]
            assert result["completions"][local].count("\n// ") == turns
            assert ("[sandbox]" in feedback) == (turns > 1) and feedback.count("<user>") == turns - 1
    # The straddling group beta was expanded on both processes (the whole group's 3 failures are in
    # LEAP's band); each half alone would have been decided differently.
    assert leap_run[0]["extra"]["gate"][4:6] == leap_run[1]["extra"]["gate"][0:2] == ["expand", "expand"]
    assert [leap.FailBandGate(1, 1).decide(n_fail, 2) for n_fail in (1, 2)] != [leap.Expansion.expand] * 2


def test_a_transformers_5_tokenizer_gives_token_ids():
    """transformers 5's apply_chat_template(tokenize=True) returns a BatchEncoding by default (TRL allows it:
    pyproject.toml there has transformers>=4.56.2): the prompt and feedback ids must be the template's tokens,
    not the mapping's keys."""
    result = run(batch_encoding=True)
    tokenizer = trl_model.CharTokenizer()
    for rank, rows in zip(result, [dataset_rows()[:LOCAL_ROWS], dataset_rows()[LOCAL_ROWS:]]):
        for ids, row in zip(rank["prompt_ids"], rows):
            assert ids == tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True)
        for completion, mask, turns in zip(rank["completion_ids"], rank["tool_mask"], rank["extra"]["turns"]):
            feedback = "".join(chr(t) for t, m in zip(completion, mask) if m == 0)
            assert feedback.count("<user>") == turns - 1 and "input_ids" not in feedback


def test_a_generate_without_logprobs_gives_logprobs_none():
    """TRL accepts logprobs=None; zeros would make the vLLM importance-sampling ratio exp(old - 0)
    (grpo_trainer.py:2576-2590), and with that correction on a rollout without log-probs is refused."""
    result = run(logprobs=False)
    assert all(rank["logprobs"] is None for rank in result)
    server = trl_model.VllmServer(PLANS)
    try:
        with pytest.raises(RuntimeError, match="generate gave no log-probs.*vllm_importance_sampling_correction"):
            run(logprobs=False, args={"use_vllm": True, "vllm_importance_sampling_correction": True},
                vllm_base_url=server.base_url)
    finally:
        server.close()


def test_rollout_func_runs_inside_a_running_event_loop():
    """A notebook runs an event loop: asyncio.run inside rollout_func raised there."""
    result = run(in_event_loop=True)
    assert [t for rank in result for t in rank["extra"]["solved_turn"]] == [p[1] for p in expected()]


def test_vllm_server_generate_calls_the_server_from_every_process_at_once():
    """TRL syncs the weights to the server before rollout_func (grpo_trainer.py:2151-2155); every process then
    posts its rows' turns itself, concurrently, with no collective, and gets the sampled log-probs. Only process
    0 syncs, with no collective: a slow sync shows whether the others wait for it before their first turn."""
    server = trl_model.VllmServer(PLANS, delay=0.3, sync_delay=1.0)
    try:
        result = run(generate="vllm_server", args={"use_vllm": True, "vllm_server_base_url": server.base_url},
                     vllm_base_url=server.base_url,
                     trainer_kwargs={"leap_score_tolerance": leap.scores.TURNS_ONLY_TOLERANCE})
    finally:
        server.close()
    assert {r["weights_version"] for r in server.requests} == {1}  # after the sync, before any other
    assert server.most_in_flight >= LOCAL_ROWS  # a process's rows at once (one at a time: 1)
    assert all(r["prompts"] == 1 for r in server.requests)
    got = np.array([a for rank in result for a in rank["advantages"]])
    np.testing.assert_allclose(got, reference_advantages(), rtol=0, atol=1e-6)
    for rank in result:
        for logprobs, mask in zip(rank["logprobs"], rank["tool_mask"]):
            assert [lp for lp, m in zip(logprobs, mask) if m] == [-0.25] * sum(mask)


def test_trls_collective_generate_per_row_hangs():
    """The failure the recipe avoids: TRL's vllm_generation.generate is a collective (vllm_generation.py:551-610);
    called per row, the processes (whose rows need different numbers of turns) wait for each other for ever."""
    server = trl_model.VllmServer(PLANS)
    try:
        with pytest.raises(RuntimeError, match="BrokenBarrierError|no answer"):
            run(generate="trl_collective", args={"use_vllm": True, "vllm_importance_sampling_correction": False},
                vllm_base_url=server.base_url, collective_timeout=5.0)
    finally:
        server.close()


def test_leap_advantages_leave_unscored_rows_out():
    rewards = np.array([1.0, np.nan, 0.0, 2.0, 5.0, 5.0, 5.0, 5.0])
    got = leap.trl.leap_advantages(rewards, 4)
    assert got[1] == 0
    np.testing.assert_allclose(got[[0, 2, 3]], leap.rank_advantages_of_scores(rewards[[0, 2, 3]], [0, 0, 0]))
    assert (got[4:] == 0).all()
    dr = leap.trl.leap_advantages(rewards, 4, "dr_grpo")
    np.testing.assert_allclose(dr[[0, 2, 3]], rewards[[0, 2, 3]] - 1.0)
    with pytest.raises(ValueError, match="do not split into groups of 3"):
        leap.trl.leap_advantages(rewards, 3)


def test_a_masked_row_is_not_trained_and_not_ranked():
    # Beta's row 5 is never judged at turn 1, row 7 at turn 2: both masked.
    plans = dict(PLANS, beta=[[(C, 1.5)], [("lost", None)], [("wrong_answer", None), (C, 0.7)],
                              [("compile_error", None), ("lost", None)]])
    result = run(plans=plans, trainer_kwargs={"leap_score_tolerance": leap.scores.TURNS_ONLY_TOLERANCE})
    masked = result[0]["extra"]["masked"] + result[1]["extra"]["masked"]
    assert masked == [0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]
    # The gate counted beta's three judged members (two failures): expanded, so row 6 was repaired.
    assert result[0]["extra"]["gate"][4] == "expand" and result[1]["extra"]["solved_turn"][0] == 2
    # No token of a masked row is trained (env_mask is TRL's tool mask, a loss mask).
    for row in (5, 7):
        rank, local = divmod(row, LOCAL_ROWS)
        mask = result[rank]["tool_mask"][local]
        assert len(mask) > 0 and set(mask) == {0}
    # Unscored, the masked rows get 0; beta's judged rows 4 and 6 are ranked between themselves.
    got = [a for rank in result for a in rank["advantages"]]
    assert got[5] == 0 and got[7] == 0
    assert got[4] == pytest.approx(1.0) and got[6] == pytest.approx(-1.0)
    assert result[0]["metrics"]["leap/masked_samples"] == pytest.approx([2 / 12])
