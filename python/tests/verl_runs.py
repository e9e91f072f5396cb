# SPDX-License-Identifier: Apache-2.0
"""What the verl tests share: verl's trainer config in struct mode with Hydra's overrides, the overrides
docs/python.md gives, dataset rows through RLHFDataset, the scripted plans, a run of the process model
(verl_model.run_ppo) and the checks of its records. Imported by the tests only, never by the model's
actors (verl_model stays free of leap: an actor imports leap only as the configuration says)."""
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf, open_dict

import leap
import leap.rows
import verl_model

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = Path(os.environ.get("LEAP_SOURCE_DIR", Path(HERE).parents[1]))
N, MAX_TURNS = 8, 3

# One plan per sample: (verdict, speedup[, completion length]) per turn, the last repeated.
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
AGENT_LOOP_ENTRY = {"name": "leap_kernel", "_target_": "leap.verl_agent.LeapKernelAgentLoop", "max_turns": MAX_TURNS,
                    "environment": "verl_model:scripted_environment"}


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


def trainer_config(tmp_path, *, workers=2, overrides=(), entry=None, response_length=4096, val_n=1, use_v1=True):
    """verl's trainer config (ppo_trainer.yaml's keys leap touches, in struct mode) with the agent loop file
    written beside it, then the overrides."""
    loop_file = tmp_path / "leap_agent.yaml"
    OmegaConf.save(OmegaConf.create([dict(entry or AGENT_LOOP_ENTRY)]), loop_file)
    config = OmegaConf.create({
        "data": {"train_batch_size": 4, "apply_chat_template_kwargs": {}},
        "actor_rollout_ref": {"rollout": {
            "n": N, "prompt_length": 256, "response_length": response_length, "temperature": 1.0,
            "calculate_log_probs": True, "val_kwargs": {"n": val_n, "temperature": 0.0},
            "agent": {"num_workers": workers, "default_agent_loop": "single_turn_agent",
                      "agent_loop_config_path": None}}},
        "algorithm": {"adv_estimator": "gae", "norm_adv_by_std_in_grpo": True, "use_kl_in_reward": False,
                      "gamma": 1.0, "lam": 1.0},
        "trainer": {"use_v1": use_v1, "val_before_train": True},
        "ray_kwargs": {"ray_init": {"num_cpus": None, "runtime_env": {"py_executable": None}}},
    })
    OmegaConf.set_struct(config, True)
    return hydra_overrides(config, [f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_file}", *overrides])


def documented_overrides():
    """The multi-turn overrides docs/python.md gives: the lines of its `python3 -m verl.trainer.main_ppo` block."""
    text = (SOURCE / "docs" / "python.md").read_text()
    block = text.split("python3 -m verl.trainer.main_ppo", 1)[1].split("```", 1)[0]
    overrides = [line.strip().rstrip("\\").strip() for line in block.splitlines()]
    overrides = [o for o in overrides if re.match(r"^\+?[A-Za-z_][\w.]*=", o)]
    assert any("adv_estimator=leap_rank" in o for o in overrides), overrides
    # the test writes its own agent-loop file and hands the rows over itself
    return [o for o in overrides if "agent_loop_config_path" not in o and not o.startswith("data.")]


def dataset(tasks):
    return [verl_model.rlhf_dataset_item(leap.rows.row(task, f"Write the kernel for {task}", "train"))
            for task in tasks]


def verl_site(tmp_path_factory):
    """The model of verl, installed where the actors' interpreter finds it (not in this process): a test
    module's autouse fixture (`verl_site = pytest.fixture(scope="module", autouse=True)(verl_runs.verl_site)`)."""
    site = tmp_path_factory.mktemp("verl_site")
    verl_model.write_verl_package(site)
    VERL_SITE.append(str(site))
    yield site
    VERL_SITE.remove(str(site))


VERL_SITE = []


def launcher_env(**extra):
    """The environment a local Ray cluster's actors inherit from the launcher: verl and leap importable (leap's
    build tree on PYTHONPATH), no plugin installed, no GPU for a CPU-only actor."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("VERL_")}
    environment["PYTHONPATH"] = os.pathsep.join([*VERL_SITE, environment.get("PYTHONPATH", "")])
    environment.update({"CUDA_VISIBLE_DEVICES": "", **extra})
    return environment


def run(config, tasks, plans=PLANS, *, env=None, val_tasks=None, processor=None, hide=()):
    return verl_model.run_ppo(config, dataset(tasks), plans, launcher_env=env or launcher_env(),
                              val_dataset=dataset(val_tasks) if val_tasks else None, processor=processor, hide=hide)


def result_of(report):
    assert "error" not in report, report.get("error")
    assert not report.get("session_errors"), report["session_errors"]
    return report["result"]


def expected_outcome(plan, expands, max_turns=MAX_TURNS):
    """(solved turn, speedup, best verdict) of a plan under the gate's decision."""
    order = ["compile_error", "runtime_error", "timeout", "wrong_answer", "correct"]
    best = "compile_error"
    for turn in range(1, (max_turns if expands else 1) + 1):
        verdict, speedup = plan[min(turn, len(plan)) - 1][:2]
        best = max(best, verdict, key=order.index)
        if verdict == C:
            return turn, speedup, best
    return 0, None, best


def infos(records):
    return [r["extra_fields"]["reward_extra_info"] for r in records]


def check_groups(records, tasks, gate_for):
    """Per uid: the gate's decisions and the outcomes the plans give under them."""
    by_uid = {}
    for record in records:
        by_uid.setdefault(record["uid"], []).append(record)
    assert len(by_uid) == len(tasks)
    for members in by_uid.values():
        task = members[0]["extra_fields"]["raw_prompt"][0]["content"].split("for ", 1)[1]
        plans = PLANS[task][:len(members)]
        n_fail = sum(plan[0][0] != C for plan in plans)
        expansion = gate_for(len(members)).decide(n_fail, len(members))
        expected = Counter((expansion.name,) + expected_outcome(plan, expansion == leap.Expansion.expand) for plan in plans)
        got = Counter((i["gate"], i["solved_turn"], None if not i["solved_turn"] else float(i["speedup"]), i["verdict"])
                      for i in infos(members))
        assert got == expected, (task, got, expected)


def expected_rank(result, order):
    fields = infos(result["records"])
    solved = np.array([f["solved_turn"] for f in fields], dtype=np.int32)
    speedup = np.array([float(f["speedup"]) for f in fields])
    uids = np.array([r["uid"] for r in result["records"]], dtype=object)
    per_row = leap.rank_advantages(solved, uids, speedup=speedup, order=order)
    return torch.from_numpy(per_row).float().unsqueeze(-1) * result["response_mask"]
