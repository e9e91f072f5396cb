# SPDX-License-Identifier: Apache-2.0
"""leap.verl in verl's trainer, through the process model of verl_model.py (verl-project/verl at commit
1dda039b9c6311889a9c9a26040677e1254814f9): where the estimators get registered (TaskRunnerV1 is a process of
its own: main_ppo.py:102-163; every `import verl` imports VERL_USE_EXTERNAL_MODULES and the verl.plugins
entry points: verl/__init__.py:49-76; the advantage: trainer_base.py:1638-1690, ray_trainer.py:186-281),
with the overrides docs/python.md gives; masked samples and Dr.GRPO through the trainer's advantage step;
Hydra's struct mode. Not exercised: a real verl, Ray, vLLM, a tokenizer."""
import asyncio
import importlib
import math
import os
import subprocess
import sys

import numpy as np
import omegaconf
import pytest
import torch

import leap
import leap.verl
import leap.verl_agent
from leap.environment import NoVerdict
from leap.sandbox import SandboxError
import verl_model
import verl_runs
from verl_runs import (C, MAX_TURNS, PLANS, SOURCE, documented_overrides, expected_rank, hydra_overrides, infos,
                       launcher_env, result_of, run, trainer_config)

verl_site = pytest.fixture(scope="module", autouse=True)(verl_runs.verl_site)


# ---- registration: where verl computes the advantage ---------------------------------------------------

def test_the_documented_overrides_register_leap_rank_in_the_task_runner(tmp_path):
    """verl computes the advantage in TaskRunnerV1, a process of its own (main_ppo.py:102-163,
    trainer_base.py:1670): with the overrides docs/python.md gives and a leap on PYTHONPATH (no plugin
    installed), leap.verl must be imported there by verl itself (verl/__init__.py:49-52)."""
    config = trainer_config(tmp_path, overrides=documented_overrides())
    assert config.algorithm.adv_estimator == "leap_rank"
    result = result_of(run(config, ["easy", "band", "hopeless", "edge"]))
    torch.testing.assert_close(result["advantages"], expected_rank(result, leap.KernelOrder.turns_only()),
                               rtol=0, atol=1e-6)


def test_without_the_override_the_agent_loop_stops_the_run_saying_what_to_add(tmp_path):
    """The same run without the override: verl's own error comes only at compute_advantage, after a whole
    rollout (core_algos.py:148-149); leap's agent loop, the first leap code in the run, stops every sample
    before it generates, with the line to add."""
    overrides = [o for o in documented_overrides() if "VERL_USE_EXTERNAL_MODULES" not in o]
    # plugins off: a leap that is not pip-installed (under check_wheel.py this one is, with its entry point)
    report = run(trainer_config(tmp_path, overrides=overrides), ["easy", "band"],
                 env=launcher_env(VERL_USE_EXTERNAL_PLUGINS="none"))
    # verl logs a sample's error and keeps going (agent_loop_tq.py:133-143): every sample stops before its
    # first token, and the step ends at the replay buffer, never reaching compute_advantage.
    assert report["phase"] == "rollout" and "Unknown advantage estimator" not in report["error"], report
    assert "no materializable trajectories" in report["error"], report
    errors = report["session_errors"]
    assert errors and all("RegistrationError" in e and leap.verl.REGISTRATION_OVERRIDE in e for e in errors), errors
    # A task runner of the user's own that imports leap.verl says so: the run goes on to verl's own check.
    report = run(trainer_config(tmp_path, overrides=overrides), ["easy", "band"],
                 env=launcher_env(VERL_USE_EXTERNAL_PLUGINS="none", LEAP_VERL_SKIP_REGISTRATION_CHECK="1"))
    assert report["rollouts"] == 1 and "Unknown advantage estimator simply: leap_rank" in report["error"]


def test_an_installed_leap_registers_through_verls_plugin_entry_point(tmp_path):
    """pip install leaves pyproject.toml's `verl.plugins` entry point in site-packages; `import verl` loads it
    in every process (verl/__init__.py:60-76): no override at all."""
    import tomllib
    with open(SOURCE / "pyproject.toml", "rb") as f:
        declared = tomllib.load(f)["project"]["entry-points"]["verl.plugins"]
    assert declared == {"leap": "leap.verl"}
    site = tmp_path / "site"
    verl_model.write_installed_leap(site, entry_point=declared["leap"])
    env = launcher_env()
    env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", ""), str(site)])
    overrides = [o for o in documented_overrides() if "VERL_USE_EXTERNAL_MODULES" not in o]
    result = result_of(run(trainer_config(tmp_path, overrides=overrides), ["band", "edge"], env=env))
    torch.testing.assert_close(result["advantages"], expected_rank(result, leap.KernelOrder.turns_only()),
                               rtol=0, atol=1e-6)
    # VERL_USE_EXTERNAL_PLUGINS=none turns plugins off: then leap says what to add.
    os.environ["VERL_USE_EXTERNAL_PLUGINS"] = "none"
    try:
        assert "VERL_USE_EXTERNAL_MODULES=leap.verl" in leap.verl.registration_advice("leap_rank")
    finally:
        del os.environ["VERL_USE_EXTERNAL_PLUGINS"]
    assert leap.verl.registration_advice("grpo") is None


def test_a_task_runner_that_cannot_import_leap_stops_at_start_up(tmp_path):
    """leap_rank configured as documented, and leap not importable where the task runner runs (a node
    without it): the run stops as the task runner starts, before any rollout, naming the module."""
    installed = os.path.dirname(os.path.dirname(os.path.realpath(leap.__file__)))
    report = run(trainer_config(tmp_path, overrides=documented_overrides()), ["easy"], hide=[installed])
    assert report["rollouts"] == 0 and report["phase"] == "start-up", report
    # raised by verl's own import of VERL_USE_EXTERNAL_MODULES (verl/__init__.py:49-52) as the actor starts
    assert "No module named 'leap'" in report["error"] and "verl/__init__.py" in report["error"], report["error"]


# Samples 0 and 1 are never judged at turn 1, sample 4 at turn 2 (dead-lettered requests): masked.
FLAKY = [[("lost", None)]] * 2 + [[(C, 1.0)], [(C, 1.6)], [("wrong_answer", None), ("lost", None)]] + \
    [[("compile_error", None), (C, 1.2 + 0.1 * k)] for k in range(3)]


def test_a_masked_sample_is_not_trained_and_not_ranked(tmp_path):
    config = trainer_config(tmp_path, overrides=documented_overrides())
    result = result_of(run(config, ["flaky", "band"], {**PLANS, "flaky": FLAKY}))
    fields = infos(result["records"])
    flaky = [i for i, r in enumerate(result["records"])
             if r["extra_fields"]["raw_prompt"][0]["content"].endswith("flaky")]
    masked = np.array([f["masked"] for f in fields])
    assert sorted(masked[flaky].tolist()) == [0] * 5 + [1] * 3 and masked.sum() == 3
    # The gate saw the six judged members of flaky (two correct): four failures, in LEAP's band.
    assert {fields[i]["gate"] for i in flaky} == {"expand"}
    mask = result["response_mask"]
    assert (mask[masked == 1].sum(-1) == 0).all() and (mask[masked == 0].sum(-1) > 0).all()
    got = result["advantages"]
    assert (got[masked == 1] == 0).all()
    ranked = sorted(float(got[r][mask[r] > 0][0]) for r in flaky if not masked[r])
    assert ranked == pytest.approx(sorted([0.75, 0.75, -0.5, -0.5, -0.5]))  # (wins - losses) / (5 - 1)
    metrics = leap.verl_agent.step_metrics({k: np.array([f[k] for f in fields]) for k in fields[0]}, MAX_TURNS)
    assert metrics["leap/masked_samples"] == pytest.approx(3 / 16)


def test_dr_grpo_when_configured(tmp_path):
    overrides = [o.replace("adv_estimator=leap_rank", "adv_estimator=leap_grpo") for o in documented_overrides()]
    for norm in (True, False):
        config = trainer_config(tmp_path, overrides=overrides + [f"algorithm.norm_adv_by_std_in_grpo={norm}"])
        result = result_of(run(config, ["band", "edge"]))
        rewards = result["rm_scores"]
        uids = np.array([r["uid"] for r in result["records"]], dtype=object)
        sys.path.insert(0, str(tmp_path / "model"))
        verl_model.write_verl_package(tmp_path / "model")
        try:
            from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
            reference, _ = compute_grpo_outcome_advantage(rewards.clone(), result["response_mask"], uids,
                                                          norm_adv_by_std_in_grpo=norm)
        finally:
            sys.path.remove(str(tmp_path / "model"))
            for name in [m for m in sys.modules if m == "verl" or m.startswith("verl.")]:
                del sys.modules[name]
        torch.testing.assert_close(result["advantages"], reference, rtol=1e-5, atol=1e-4)


def test_struct_mode_takes_leaps_keys_only_with_plus(tmp_path):
    config = trainer_config(tmp_path)
    with pytest.raises((omegaconf.errors.ConfigKeyError, omegaconf.errors.ConfigAttributeError), match="not in struct"):
        hydra_overrides(config, ["algorithm.leap_score_tolerance=0.05"])
    with pytest.raises((omegaconf.errors.ConfigKeyError, omegaconf.errors.ConfigAttributeError), match="not in struct"):
        hydra_overrides(config, ["ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=leap.verl"])
    hydra_overrides(config, ["+algorithm.leap_score_tolerance=0.05",
                             "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=leap.verl"])
    assert config.algorithm.leap_score_tolerance == 0.05
    assert verl_model.ray_runtime_env(config)["env_vars"]["VERL_USE_EXTERNAL_MODULES"] == "leap.verl"


def test_estimators_read_struct_mode_configs_and_warn_on_groups_of_one(tmp_path):
    leap_verl = leap.verl
    config = trainer_config(tmp_path, overrides=["algorithm.norm_adv_by_std_in_grpo=false"]).algorithm
    rewards = torch.tensor([[1.0], [0.0], [3.0], [2.0]])
    index = np.array(["a", "a", "a", "b"], dtype=object)
    with pytest.warns(RuntimeWarning, match="1 of 2 uid groups have a single sample"):
        dr, _ = leap_verl.leap_grpo_advantage(rewards, torch.ones(4, 1), index, config=config)
    assert dr[:3, 0].tolist() == pytest.approx([-1 / 3, -4 / 3, 5 / 3]) and dr[3, 0] == 0
    # Without the key, struct mode does not raise and the tolerance is 0.
    rank, _ = leap_verl.leap_rank_advantage(rewards[:3], torch.ones(3, 1), index[:3], config=config)
    assert rank[:, 0].tolist() == pytest.approx([0.0, -1.0, 1.0])


def test_a_broken_verl_raises_at_import(tmp_path):
    verl_model.write_verl_package(tmp_path)
    (tmp_path / "verl" / "trainer" / "ppo" / "core_algos.py").write_text("import a_module_verl_lacks\n")
    program = "import leap.verl"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True, text=True)
    assert run.returncode != 0
    assert "verl is installed" in run.stderr and "a_module_verl_lacks" in run.stderr


def test_compute_score_one_pool_per_process_and_the_encoding(tmp_path):
    """verl's reward loop awaits compute_score(data_source, solution_str, ground_truth, extra_info,
    **reward_kwargs). A stand-in serve answers eval with a scripted result; the pool is made once
    per process and again in a forked child."""
    leap_verl = leap.verl
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
