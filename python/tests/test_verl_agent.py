# SPDX-License-Identifier: Apache-2.0
"""leap's verl pieces driven through verl's call sequence, modelled in verl_model.py after verl at
commit b178a3cd56f58b2d502255daba591e92833930a7: the Hydra config in struct mode with leap's keys
added by `+` overrides, uids from the trainer, the agent loop instantiated from an agent-loop config
entry in two AgentLoopWorker processes, rm_scores and reward_extra_info through the worker's
postprocess, compute_advantage with the algorithm config. Exercised: leap.verl's registration and
estimators, leap.verl_agent's agent loop, DCP decisions per group (whole, and split across the two
workers), the reward encoding, step_metrics. Not exercised: a real verl, Ray, vLLM/SGLang, a real
tokenizer, the real sandbox (a scripted environment stands in; compute_score's pool is tested with
the stand-in server below), KL in the reward."""
import asyncio
import importlib
import math
import multiprocessing
import os
import sys
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")
omegaconf = pytest.importorskip("omegaconf")
from omegaconf import OmegaConf, open_dict  # noqa: E402

import leap  # noqa: E402
from leap.environment import NoVerdict  # noqa: E402
from leap.sandbox import SandboxError  # noqa: E402
import verl_model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
N, MAX_TURNS = 8, 3

# One plan per sample: (verdict, speedup) per turn, the last repeated.
C = "correct"
PLANS = {
    # 2 of 8 fail turn 1: LEAP's band (t_min = 4) prunes it as easy; the two stay unsolved.
    "easy": [[(C, 1.0 + 0.1 * k)] for k in range(6)] + [[("compile_error", None), (C, 1.3)]] * 2,
    # 5 fail: expanded; two solve at turn 2, two at turn 3, one never.
    "band": [[(C, 1.5)], [(C, 0.8)], [(C, 2.5)], [("wrong_answer", None), (C, 1.2)],
             [("wrong_answer", None), (C, 3.0)], [("compile_error", None), ("runtime_error", None), (C, 1.1)],
             [("compile_error", None), ("timeout", None), (C, 0.9)], [("compile_error", None)]],
    # all 8 fail: catastrophic, no further turns although turn 2 would solve.
    "hopeless": [[("compile_error", None), (C, 1.0)]] * 8,
    # 4 fail, the band's lower edge: expanded.
    "edge": [[(C, 1.0)], [(C, 1.7)], [(C, 0.6)], [(C, 2.2)]] + [[("timeout", None), (C, 1.4 + 0.2 * k)] for k in range(4)],
}
AGENT_LOOPS = [{"name": "leap_kernel", "_target_": "leap.verl_agent.LeapKernelAgentLoop", "max_turns": MAX_TURNS,
                "environment": "verl_model:scripted_environment"}]


def hydra_overrides(config, overrides):
    """Hydra's command-line overrides on a struct-mode config: `key=value` changes an existing key
    (a new key is an error), `+key=value` adds one."""
    for override in overrides:
        add = override.startswith("+")
        key, _, value = override.lstrip("+").partition("=")
        parsed = OmegaConf.select(OmegaConf.from_dotlist([f"v={value}"]), "v")
        if add:
            with open_dict(config):
                OmegaConf.update(config, key, parsed, merge=True)
        else:
            OmegaConf.update(config, key, parsed, merge=True)
    return config


def trainer_config(batch_size, workers, overrides=()):
    config = OmegaConf.create({
        "data": {"train_batch_size": batch_size},
        "actor_rollout_ref": {"rollout": {"n": N, "prompt_length": 64, "response_length": 1024, "temperature": 1.0,
                                          "agent": {"num_workers": workers, "default_agent_loop": "single_turn_agent",
                                                    "agent_loop_config_path": None}}},
        "algorithm": {"adv_estimator": "gae", "norm_adv_by_std_in_grpo": True, "use_kl_in_reward": False,
                      "gamma": 1.0, "lam": 1.0},
    })
    OmegaConf.set_struct(config, True)
    return hydra_overrides(config, ["actor_rollout_ref.rollout.agent.default_agent_loop=leap_kernel", *overrides])


@pytest.fixture(scope="module")
def verl(tmp_path_factory):
    """The model of verl on sys.path (for this process and the spawned workers), leap.verl and
    leap.verl_agent imported against it."""
    directory = str(tmp_path_factory.mktemp("verl_model"))
    verl_model.write_verl_package(directory)
    sys.path.insert(0, directory)
    ours = [m for m in sys.modules if m == "verl" or m.startswith(("verl.", "leap.verl"))]
    saved = {name: sys.modules.pop(name) for name in ours}  # put back afterwards, for other test files
    leap_verl = importlib.import_module("leap.verl")
    leap_agent = importlib.import_module("leap.verl_agent")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        yield leap_verl, leap_agent, pool
    sys.path.remove(directory)
    for name in [m for m in sys.modules if m == "verl" or m.startswith(("verl.", "leap.verl"))]:
        del sys.modules[name]
    sys.modules.update(saved)
    for name, module in saved.items():
        if name.startswith("leap.") and "." not in name[5:]:
            setattr(sys.modules["leap"], name[5:], module)


def rows(tasks):
    return [{"raw_prompt": [{"role": "user", "content": f"Write the kernel for {task}"}], "data_source": "kernels",
             "reward_model": {"ground_truth": task}, "extra_info": {"leap_task": task}} for task in tasks]


def gate_for_part(size):
    """The documented band for k members of a group of N: LEAP's (ceil(N/2), N-1) for the whole
    group, (ceil(t_min k / N), k - (N - t_max)) for a part."""
    full = leap.FailBandGate.leap_default(N)
    if size == N:
        return full
    return leap.FailBandGate(math.ceil(full.t_min * size / N), max(size - (N - full.t_max), math.ceil(full.t_min * size / N)))


def expected_outcome(plan, expands):
    """(solved turn, speedup, best verdict) of a plan under the gate's decision."""
    order = ["compile_error", "runtime_error", "timeout", "wrong_answer", "correct"]
    best = "compile_error"
    for turn in range(1, (MAX_TURNS if expands else 1) + 1):
        verdict, speedup = plan[min(turn, len(plan)) - 1]
        best = max(best, verdict, key=order.index)
        if verdict == C:
            return turn, speedup, best
    return 0, None, best


def parts(tasks, workers):
    """Each worker's (task, first plan index, members) under verl's equal contiguous chunks."""
    per_worker = len(tasks) * N // workers
    result = []
    for w in range(workers):
        rows_of = [r // N for r in range(w * per_worker, (w + 1) * per_worker)]
        for group in sorted(set(rows_of)):
            members = rows_of.count(group)
            first = max(w * per_worker - group * N, 0)
            result.append((tasks[group], first, members))
    return result


def check_rollout(batch, tasks, workers, warnings):
    """Per uid: the gate's decisions and the outcomes the plans give under them; masks and scores."""
    info = batch.non_tensor_batch
    uids = info["uid"]
    split_seen = 0
    expected_by_task = {t: [] for t in tasks}
    for task, first, members in parts(tasks, workers):
        plans = PLANS[task][first:first + members]
        n_fail = sum(plan[0][0] != C for plan in plans)
        expansion = gate_for_part(members).decide(n_fail, members)
        split_seen += members < N
        for plan in plans:
            expected_by_task[task].append((expansion.name, int(members < N))
                                          + expected_outcome(plan, expansion == leap.Expansion.expand))
    for group, task in enumerate(tasks):
        rows_of = np.flatnonzero(uids == uids[group * N])
        assert len(rows_of) == N
        got = Counter((info["gate"][r], int(info["partial_group"][r]), int(info["solved_turn"][r]),
                       None if not info["solved_turn"][r] else float(info["speedup"][r]), info["verdict"][r])
                      for r in rows_of)
        assert got == Counter(expected_by_task[task]), (task, got)
    assert (split_seen > 0) == any("agent-loop worker" in w for w in warnings)
    # The score on the last response token is the encoding of (solved turn, speedup); feedback
    # tokens (after an unsolved turn 1 of an expanded group) have response_mask 0.
    assert "rollout_log_probs" not in batch.batch  # the server sent none: no made-up zeros
    scores = batch.batch["token_level_scores"].sum(-1)
    for r in range(len(uids)):
        expected = verl_model_score(int(info["solved_turn"][r]), float(info["speedup"][r]))
        assert float(scores[r]) == pytest.approx(expected, abs=1e-4)
        mask = batch.batch["response_mask"][r]
        turns = int(info["turns"][r])
        assert int(info["__num_turns__"][r]) == 2 * turns
        assert bool((mask == 0).any() and (mask[:mask.nonzero().max()] == 0).any()) == (turns > 1)
        if turns > 1:  # the sandbox's feedback is in the response, unmasked for the loss
            text = "".join(chr(int(t)) for t, m in zip(batch.batch["responses"][r], mask) if m == 0 and t != 0)
            assert "[sandbox]" in text
    return split_seen


def verl_model_score(solved_turn, speedup):
    import leap.verl
    return leap.verl.turn_and_speedup_score(solved_turn, MAX_TURNS, None if math.isnan(speedup) else speedup)


def expected_rank(batch, order):
    info = batch.non_tensor_batch
    speedup = np.array([float(s) for s in info["speedup"]])
    per_row = leap.rank_advantages(np.asarray(info["solved_turn"], dtype=np.int32), info["uid"], speedup=speedup,
                                   order=order)
    return torch.from_numpy(per_row).float().unsqueeze(-1) * batch.batch["response_mask"]


@pytest.mark.parametrize("tasks,workers,split", [(["easy", "band", "hopeless", "edge"], 2, False),
                                                 (["easy", "band", "hopeless"], 2, True)])
def test_agent_loop_through_verls_call_sequence(verl, tasks, workers, split):
    leap_verl, leap_agent, pool = verl
    config = trainer_config(len(tasks), workers, ["algorithm.adv_estimator=leap_rank",
                                                  f"+algorithm.leap_score_tolerance={leap_verl.TURNS_ONLY_TOLERANCE}"])
    batch, warnings = verl_model.fit_step(config, rows(tasks), PLANS, AGENT_LOOPS, pool)
    split_seen = check_rollout(batch, tasks, workers, warnings)
    assert (split_seen > 0) == split  # train_batch_size % num_workers == 0 keeps every group whole

    # leap_rank at the turns-only tolerance: LEAP's published order over the reported outcomes.
    got = verl_model.advantages(batch, config)
    torch.testing.assert_close(got, expected_rank(batch, leap.KernelOrder.turns_only()), rtol=0, atol=1e-6)
    assert (got[batch.batch["response_mask"] == 0] == 0).all()
    # ... at a speedup band of 5 %: turn, then speedup outside the band.
    banded = trainer_config(len(tasks), workers, ["algorithm.adv_estimator=leap_rank",
                                                  f"+algorithm.leap_score_tolerance={leap_verl.speedup_tolerance(0.05)}"])
    got_band = verl_model.advantages(batch, banded)
    torch.testing.assert_close(got_band, expected_rank(batch, leap.KernelOrder.with_speedup(0.05)), rtol=0, atol=1e-6)
    assert not torch.equal(got_band, got)

    # The logged fields summarise into a step's metrics.
    metrics = leap_agent.step_metrics(batch.non_tensor_batch, MAX_TURNS)
    solved = np.asarray(batch.non_tensor_batch["solved_turn"])
    assert metrics["leap/solved@1"] == pytest.approx(np.mean(solved == 1))
    assert metrics[f"leap/solved@{MAX_TURNS}"] == pytest.approx(np.mean(solved > 0))
    assert metrics["leap/split_samples"] == pytest.approx(np.mean(batch.non_tensor_batch["partial_group"]))


# Samples 0 and 1 are never judged at turn 1, sample 4 at turn 2 (dead-lettered requests): masked.
FLAKY = [[("lost", None)]] * 2 + [[(C, 1.0)], [(C, 1.6)], [("wrong_answer", None), ("lost", None)]] + \
    [[("compile_error", None), (C, 1.2 + 0.1 * k)] for k in range(3)]


def test_a_masked_sample_is_not_trained_and_not_ranked(verl):
    leap_verl, leap_agent, pool = verl
    tasks = ["flaky", "band"]
    config = trainer_config(len(tasks), 2, ["algorithm.adv_estimator=leap_rank",
                                            f"+algorithm.leap_score_tolerance={leap_verl.TURNS_ONLY_TOLERANCE}"])
    batch, _ = verl_model.fit_step(config, rows(tasks), {**PLANS, "flaky": FLAKY}, AGENT_LOOPS, pool)
    info = batch.non_tensor_batch
    flaky = np.flatnonzero(np.array([e["leap_task"] for e in info["extra_info"]]) == "flaky")
    masked = np.asarray(info["masked"], dtype=np.int64)
    assert masked[flaky].tolist() == [1, 1, 0, 0, 1, 0, 0, 0] and masked.sum() == 3
    # The gate saw the six judged members (two of them correct): four failures, in LEAP's band.
    assert set(info["gate"][flaky]) == {"expand"}
    # No token of a masked sample is trained, and its score is 0, not a ranked failure.
    mask = batch.batch["response_mask"]
    assert (mask[masked == 1].sum(-1) == 0).all() and (mask[masked == 0].sum(-1) > 0).all()
    assert (batch.batch["token_level_rewards"][masked == 1] == 0).all()
    # The judged members are ranked among themselves; the masked ones get 0.
    got = verl_model.advantages(batch, config)
    assert (got[masked == 1] == 0).all()
    judged = np.flatnonzero(masked == 0)
    per_row = leap.rank_advantages(np.asarray(info["solved_turn"], dtype=np.int32)[judged], info["uid"][judged],
                                   order=leap.KernelOrder.turns_only())
    expected = torch.from_numpy(per_row).float().unsqueeze(-1) * mask[judged]
    torch.testing.assert_close(got[judged], expected, rtol=0, atol=1e-6)
    ranked = [float(got[r][mask[r] > 0][0]) for r in flaky if not masked[r]]
    assert ranked == pytest.approx([0.75, 0.75, -0.5, -0.5, -0.5])  # (wins - losses) / (5 - 1)
    metrics = leap_agent.step_metrics(info, MAX_TURNS)
    assert metrics["leap/masked_samples"] == pytest.approx(3 / 16)
    solved = np.asarray(info["solved_turn"])[masked == 0]
    assert metrics["leap/solved@1"] == pytest.approx(np.mean(solved == 1))


def test_dr_grpo_when_configured(verl):
    leap_verl, _, pool = verl
    tasks = ["easy", "band", "hopeless", "edge"]
    config = trainer_config(len(tasks), 2, ["algorithm.adv_estimator=leap_grpo"])
    batch, _ = verl_model.fit_step(config, rows(tasks), PLANS, AGENT_LOOPS, pool)
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
    rewards, mask, uids = batch.batch["token_level_rewards"], batch.batch["response_mask"], batch.non_tensor_batch["uid"]
    for norm in (True, False):
        configured = trainer_config(len(tasks), 2, ["algorithm.adv_estimator=leap_grpo",
                                                    f"algorithm.norm_adv_by_std_in_grpo={norm}"])
        got = verl_model.advantages(batch, configured)
        reference, _ = compute_grpo_outcome_advantage(rewards.clone(), mask, uids, norm_adv_by_std_in_grpo=norm)
        torch.testing.assert_close(got, reference, rtol=1e-5, atol=1e-4)
    # Dr.GRPO differs from GRPO here: the config's False reached the estimator.
    dr = verl_model.advantages(batch, trainer_config(len(tasks), 2, ["algorithm.adv_estimator=leap_grpo",
                                                                     "algorithm.norm_adv_by_std_in_grpo=false"]))
    assert not torch.allclose(dr, verl_model.advantages(batch, config), atol=1e-2)


def test_struct_mode_takes_leaps_key_only_with_plus():
    config = trainer_config(4, 2)
    with pytest.raises((omegaconf.errors.ConfigKeyError, omegaconf.errors.ConfigAttributeError), match="not in struct"):
        hydra_overrides(config, ["algorithm.leap_score_tolerance=0.05"])
    hydra_overrides(config, ["+algorithm.leap_score_tolerance=0.05"])
    assert config.algorithm.leap_score_tolerance == 0.05


def test_estimators_read_struct_mode_configs_and_warn_on_groups_of_one(verl):
    leap_verl, _, _ = verl
    config = trainer_config(4, 2, ["algorithm.norm_adv_by_std_in_grpo=false"]).algorithm
    rewards = torch.tensor([[1.0], [0.0], [3.0], [2.0]])
    index = np.array(["a", "a", "a", "b"], dtype=object)
    with pytest.warns(RuntimeWarning, match="1 of 2 uid groups have a single sample"):
        dr, _ = leap_verl.leap_grpo_advantage(rewards, torch.ones(4, 1), index, config=config)
    assert dr[:3, 0].tolist() == pytest.approx([-1 / 3, -4 / 3, 5 / 3]) and dr[3, 0] == 0
    # Without the key, struct mode does not raise and the tolerance is 0.
    rank, _ = leap_verl.leap_rank_advantage(rewards[:3], torch.ones(3, 1), index[:3], config=config)
    assert rank[:, 0].tolist() == pytest.approx([0.0, -1.0, 1.0])


def test_a_broken_verl_raises_at_import(tmp_path):
    import subprocess
    verl_model.write_verl_package(tmp_path)
    (tmp_path / "verl" / "trainer" / "ppo" / "core_algos.py").write_text("import a_module_verl_lacks\n")
    program = "import leap.verl"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True, text=True)
    assert run.returncode != 0
    assert "verl is installed" in run.stderr and "a_module_verl_lacks" in run.stderr


def test_compute_score_one_pool_per_process_and_the_encoding(verl, tmp_path):
    """verl's reward loop awaits compute_score(data_source, solution_str, ground_truth, extra_info,
    **reward_kwargs). A stand-in serve answers eval with a scripted result; the pool is made once
    per process and again in a forked child."""
    leap_verl, _, _ = verl
    # verl's get_custom_reward_fn loads `pkg://leap.verl` by module name, and its reward managers
    # await compute_score when inspect.iscoroutinefunction says so.
    import inspect
    assert importlib.import_module("leap.verl").compute_score is leap_verl.compute_score
    assert inspect.iscoroutinefunction(leap_verl.compute_score)
    server = tmp_path / "serve.py"
    server.write_text(SCRIPTED_SERVE)
    leap_verl.configure_sandbox([sys.executable, str(server)], servers=1)
    try:
        async def score_all():
            return await asyncio.gather(*[leap_verl.compute_score(
                "kernels", f"Here:\n```cuda\n// {verdict} {speedup}\n```", "softmax", {"leap_task": "softmax"}, max_turns=3)
                for verdict, speedup in [("correct", 2.0), ("correct", 0.5), ("wrong_answer", None)]])
        results = asyncio.run(score_all())
        pool = leap_verl.process_pool()
        assert asyncio.run(score_all()) == results and leap_verl.process_pool() is pool  # one pool, reused
        assert [r["verdict"] for r in results] == ["correct", "correct", "wrong_answer"]
        assert [r["solved_turn"] for r in results] == [1, 1, 0]
        assert results[0]["score"] == leap_verl.turn_and_speedup_score(1, 3, 2.0) > results[1]["score"] > 0
        assert results[2]["score"] == 0 and math.isnan(results[2]["speedup"])
        # A forked child makes its own pool (its servers are its own).
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            try:
                mine = leap_verl.process_pool()
                ok = mine is not pool and asyncio.run(score_all()) == results
                os.write(write, b"1" if ok else b"0")
            finally:
                os._exit(0)
        os.waitpid(child, 0)
        assert os.read(read, 1) == b"1"
        # An environment failure is evaluated again: a dead letter, then the retry's verdict.
        retried = asyncio.run(leap_verl.compute_score("kernels", "```cuda\n// correct 1.5 lostonce\n```", "softmax"))
        assert retried["verdict"] == "correct" and retried["masked"] == 0
        with pytest.raises(SandboxError, match="delivered 3 times"):
            asyncio.run(leap_verl.compute_score("kernels", "```cuda\n// correct 1.5 lostonce 2\n```", "softmax",
                                                environment_retries=0))
        # No verdict on any attempt (no GPU) is an error, not a score of 0; a server's error keeps its code.
        with pytest.raises(NoVerdict):
            asyncio.run(leap_verl.compute_score("kernels", "```cuda\n// nogpu\n```", "softmax"))
        with pytest.raises(SandboxError, match="unknown task") as error:
            asyncio.run(leap_verl.compute_score("kernels", "```cuda\n// badtask\n```", "nope"))
        assert error.value.code == "bad_request"
    finally:
        leap_verl.configure_sandbox()


SCRIPTED_SERVE = r'''
import json, sys
seen = set()
for line in sys.stdin:
    request = json.loads(line)
    source = request.get("source", "")
    first = source not in seen
    seen.add(source)
    if "lostonce" in source and first:
        reply = {"id": request["id"], "ok": False, "code": "dead_lettered", "error": "delivered 3 times"}
    elif "badtask" in source:
        reply = {"id": request["id"], "ok": False, "code": "bad_request", "error": "unknown task 'nope'"}
    elif "nogpu" in source:
        reply = {"id": request["id"], "ok": True, "result": {"status": "no_gpu", "verdict": None}}
    else:
        verdict, speedup = source.split("// ", 1)[1].split()[:2]
        reply = {"id": request["id"], "ok": True,
                 "result": {"status": "verdict", "verdict": verdict,
                            "speedup": None if speedup == "None" else float(speedup), "feedback": ""}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
'''
