# SPDX-License-Identifier: Apache-2.0
"""leap.openrlhf through OpenRLHF's call sequence and process model, after OpenRLHF/OpenRLHF at commit
3c3be6234e0cb353e76bb8019947db9dfe99fca7. Here: RemoteExperienceMaker.split_rollout_samples (index =
position, micro batches of rollout.micro_batch_size, so a prompt group can straddle experiences) and
compute_advantages_and_returns (the rewards put back in prompt order and viewed (-1, n_samples_per_prompt),
the dr_grpo branch, compute_reward with the KL term, get_cumulative_returns with gamma 1), the reward
function's dict. In openrlhf_model.py: the PPOTrainer actor in a process of its own behind a model of Ray
(ppo_trainer.py:148-186, 445; train_ppo_ray.py:19-32, 151-165; Ray's runtime_env setup hook), the rollout
actor's agent executors (vllm_engine.py:19-31, 185-209; agent.py:202-301) and samples_generator's
experiences (247-315). Exercised: leap_experience_maker, the launcher (python3 -m leap.openrlhf), the agent
executor, reward_func against a stand-in serve. Not exercised: a real OpenRLHF, Ray, vLLM, the models'
forward passes, length penalties."""
import asyncio
import itertools
import json
import math
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
import torch

import leap
import leap.openrlhf
import leap.process_sandbox
import leap.sandbox
import leap.scores
import openrlhf_model


class Experience:
    def __init__(self, rewards, action_mask, kl):
        self.rewards, self.action_mask, self.kl, self.info = rewards, action_mask, kl, {}
        self.index = None


def compute_reward(r, kl_coef, kl, action_mask):
    """openrlhf.models.utils.compute_reward: r on the last action token, minus kl_coef * kl."""
    last = action_mask.size(1) - 1 - action_mask.long().fliplr().argmax(dim=1, keepdim=True)
    return torch.zeros_like(kl).scatter_(1, last, r.unsqueeze(1).to(kl.dtype)) - kl_coef * kl


class RemoteExperienceMaker:
    """The advantage path of OpenRLHF's RemoteExperienceMaker at the pinned commit."""

    def __init__(self, args, kl_coef=0.0):
        self.strategy = types.SimpleNamespace(args=args)
        self.args, self.advantage_estimator = args, args.algo.advantage.estimator
        self.kl_ctl = types.SimpleNamespace(value=kl_coef)

    def split_rollout_samples(self, samples):
        for i, sample in enumerate(samples):
            sample.index = [i]
        size = self.args.rollout.micro_batch_size
        batches = []
        for start in range(0, len(samples), size):
            part = samples[start:start + size]
            merged = Experience(torch.cat([s.rewards for s in part]), torch.cat([s.action_mask for s in part]),
                                torch.cat([s.kl for s in part]))
            merged.index = [i for s in part for i in s.index]
            batches.append(merged)
        return batches

    def compute_advantages_and_returns(self, experiences):
        args = self.args
        exp_len = [len(e.index) for e in experiences]
        indices = torch.tensor(list(itertools.chain.from_iterable(e.index for e in experiences)))
        raw = torch.cat([e.rewards for e in experiences])
        rewards = torch.empty_like(raw)
        rewards[indices] = raw
        rewards = rewards.reshape(-1, args.rollout.n_samples_per_prompt)
        if args.algo.advantage.estimator in ("reinforce_baseline", "dr_grpo"):
            rewards = rewards - rewards.mean(-1, keepdim=True)
        rewards = rewards.reshape(-1)[indices].split(exp_len)
        for experience, reward in zip(experiences, rewards):
            reward = compute_reward(reward, self.kl_ctl.value, experience.kl, experience.action_mask)
            returns = torch.zeros_like(reward)
            running = torch.zeros(reward.size(0))
            masked = experience.action_mask * reward
            for t in reversed(range(reward.size(1))):
                running = masked[:, t] + running
                returns[:, t] = running
            experience.returns, experience.advantages = returns, returns.clone()
        return experiences


def args(estimator="dr_grpo", n=4, micro=3):
    return types.SimpleNamespace(algo=types.SimpleNamespace(advantage=types.SimpleNamespace(estimator=estimator)),
                                 rollout=types.SimpleNamespace(n_samples_per_prompt=n, micro_batch_size=micro))


def samples(rewards, length=6, rng=None):
    rng = rng or np.random.default_rng(0)
    result = []
    for reward in rewards:
        mask = torch.zeros(1, length)
        start, end = sorted(rng.choice(np.arange(length + 1), 2, replace=False))
        mask[0, start:max(end, start + 1)] = 1
        result.append(Experience(torch.tensor([reward], dtype=torch.float32), mask, torch.zeros(1, length)))
    return result


def test_rank_advantage_reaches_every_action_token():
    rng = np.random.default_rng(1)
    turns = rng.integers(0, 4, 12)
    speedup = rng.lognormal(0, 0.5, 12)
    scores = [leap.scores.turn_and_speedup_score(int(t), 3, float(s)) for t, s in zip(turns, speedup)]
    Maker = leap.openrlhf.leap_experience_maker(RemoteExperienceMaker, score_tolerance=leap.scores.TURNS_ONLY_TOLERANCE)
    maker = Maker(args(micro=5))  # 12 samples in experiences of 5, 5, 2: groups of 4 straddle them
    experiences = maker.compute_advantages_and_returns(maker.split_rollout_samples(samples(scores, rng=np.random.default_rng(2))))
    expected = leap.rank_advantages(turns.astype(np.int32), np.arange(12) // 4, order=leap.KernelOrder.turns_only())
    rows = [i for e in experiences for i in e.index]
    advantages = torch.cat([e.advantages for e in experiences])
    masks = torch.cat([e.action_mask for e in experiences])
    for row, adv, mask in zip(rows, advantages, masks):
        last = int(mask.nonzero().max())
        # every action token up to the last gets the sample's advantage; nothing after it
        np.testing.assert_allclose(adv[:last + 1][mask[:last + 1] > 0].numpy(), expected[row], atol=1e-6)
        assert (adv[last + 1:] == 0).all()
    # The unpatched dr_grpo gives reward - mean: different numbers.
    plain = RemoteExperienceMaker(args(micro=5))
    base = plain.compute_advantages_and_returns(plain.split_rollout_samples(samples(scores, rng=np.random.default_rng(2))))
    assert torch.equal(torch.cat([e.action_mask for e in base]), masks)
    assert not torch.allclose(torch.cat([e.advantages for e in base]), advantages, atol=1e-3)


def test_other_estimators_are_refused_and_patch_replaces_the_trainers_name(monkeypatch):
    Maker = leap.openrlhf.leap_experience_maker(RemoteExperienceMaker)
    with pytest.raises(ValueError, match="--algo.advantage.estimator dr_grpo"):
        maker = Maker(args(estimator="group_norm"))
        maker.compute_advantages_and_returns(maker.split_rollout_samples(samples([1.0] * 4)))
    package = types.ModuleType("openrlhf")
    trainer_package = types.ModuleType("openrlhf.trainer")
    ppo_trainer = types.ModuleType("openrlhf.trainer.ppo_trainer")
    ppo_trainer.RemoteExperienceMaker = RemoteExperienceMaker
    package.trainer, trainer_package.ppo_trainer = trainer_package, ppo_trainer
    for name, module in [("openrlhf", package), ("openrlhf.trainer", trainer_package),
                         ("openrlhf.trainer.ppo_trainer", ppo_trainer)]:
        monkeypatch.setitem(sys.modules, name, module)
    patched = leap.openrlhf.patch_openrlhf(estimator="dr_grpo")
    assert ppo_trainer.RemoteExperienceMaker is patched and issubclass(patched, RemoteExperienceMaker)
    again = leap.openrlhf.patch_openrlhf()  # patching twice wraps OpenRLHF's class, not the first patch
    assert again.__mro__[1] is RemoteExperienceMaker
    # leap's Dr.GRPO through the patched name: reward - group mean, in double, then OpenRLHF's branch.
    maker = patched(args(micro=4))
    rewards = [0.0, 1.0, 3.0, 2.0, 5.0, 5.0, 1.0, 1.0]
    experiences = maker.compute_advantages_and_returns(maker.split_rollout_samples(samples(rewards)))
    per_sample = [float(e.returns[r][e.action_mask[r] > 0][-1]) for e in experiences for r in range(len(e.index))]
    np.testing.assert_allclose(per_sample, [-1.5, -0.5, 1.5, 0.5, 2.0, 2.0, -2.0, -2.0], atol=1e-6)


def test_a_nan_reward_is_masked_not_ranked_as_a_failure():
    # Group 0: sample 1's environment failed (NaN); group 1: samples 4 and 7. The others are ranked among
    # themselves, the masked ones get 0 and no action token to train.
    scores = [192.0, math.nan, 0.0, 128.0, math.nan, 64.0, 64.0, math.nan]
    Maker = leap.openrlhf.leap_experience_maker(RemoteExperienceMaker, score_tolerance=leap.scores.TURNS_ONLY_TOLERANCE)
    maker = Maker(args(micro=3))  # experiences of 3, 3, 2: the groups of 4 straddle them
    experiences = maker.compute_advantages_and_returns(maker.split_rollout_samples(samples(scores)))
    rows = [i for e in experiences for i in e.index]
    per_row = {}
    for e in experiences:
        for r, row in enumerate(e.index):
            trained = e.action_mask[r] > 0
            per_row[row] = (float(e.returns[r][trained][-1]) if trained.any() else None, bool(trained.any()))
    assert sorted(rows) == list(range(8))
    assert [per_row[row][1] for row in range(8)] == [True, False, True, True, False, True, True, False]
    # Group 0: 192 beats 128 beats 0, G' = 3; group 1: 64 and 64 tie.
    assert [per_row[row][0] for row in (0, 2, 3, 5, 6)] == pytest.approx([1.0, -1.0, 0.0, 0.0, 0.0], abs=1e-6)
    assert all(torch.isfinite(e.advantages).all() for e in experiences)


SCRIPTED_SERVE = r'''
import json, sys
seen = set()
for line in sys.stdin:
    request = json.loads(line)
    first = request["source"] not in seen
    seen.add(request["source"])
    if "lostonce" in request["source"] and first:
        reply = {"id": request["id"], "ok": False, "code": "dead_lettered", "error": "delivered 3 times"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        continue
    if "// " not in request["source"]:  # no kernel of the scripted kind: it does not compile
        verdict, speedup = "compile_error", "None"
    else:
        verdict, speedup = request["source"].split("// ", 1)[1].split()[:2]
    reply = {"id": request["id"], "ok": True,
             "result": {"status": "verdict", "verdict": verdict,
                        "speedup": None if speedup == "None" else float(speedup), "feedback": "",
                        "task": request["task"]}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
'''


def test_reward_func_returns_openrlhfs_dict(tmp_path):
    server = tmp_path / "serve.py"
    server.write_text(SCRIPTED_SERVE)
    leap.process_sandbox.configure([sys.executable, str(server)], servers=1)
    try:
        queries = ["prompt\n```cuda\n// correct 2.0\n```", "prompt\n```cuda\n// wrong_answer None\n```"]
        result = leap.openrlhf.reward_func(queries, ["prompt", "prompt"], ["softmax", '{"name": "custom"}'])
    finally:
        leap.process_sandbox.configure()
    assert result["rewards"].tolist() == pytest.approx([leap.scores.turn_and_speedup_score(1, 1, 2.0), 0.0])
    assert result["scores"].tolist() == [1.0, 0.0]
    assert result["extra_logs"]["leap_verdict"].tolist() == [4.0, 3.0]
    assert result["extra_logs"]["leap_speedup"][0] == 2.0 and math.isnan(result["extra_logs"]["leap_speedup"][1])


def test_reward_func_masks_an_environment_failure_and_says_why(tmp_path, caplog):
    """An evaluation without a verdict is made again, then the sample is masked (NaN), its cause logged:
    raising would be caught by OpenRLHF's executor and logged at INFO (agent.py:298-299), the sample left
    without a reward and the run failing later on another cause."""
    server = tmp_path / "serve.py"
    server.write_text(SCRIPTED_SERVE)
    leap.process_sandbox.configure([sys.executable, str(server)], servers=1)
    try:
        result = leap.openrlhf.reward_func(["```cuda\n// correct 2.0 lostonce\n```"], [""], ["softmax"])
        assert result["scores"].tolist() == [1.0]  # the retry's verdict
        with caplog.at_level("WARNING", logger="leap.openrlhf"):
            masked = leap.openrlhf.reward_func(["```cuda\n// correct 2.0 lostonce again\n```"], [""], ["softmax"],
                                               environment_retries=0)
        assert math.isnan(masked["rewards"][0]) and masked["extra_logs"]["leap_masked"].tolist() == [1.0]
        assert "delivered 3 times" in caplog.text and "masked" in caplog.text
    finally:
        leap.process_sandbox.configure()


def test_the_reward_function_scores_the_response_not_the_prompt(tmp_path):
    """OpenRLHF decodes the prompt's tokens and the response's together (agent.py:283): a prompt that shows an
    example kernel must not be scored when the response has none."""
    server = tmp_path / "serve.py"
    server.write_text(SCRIPTED_SERVE)
    leap.process_sandbox.configure([sys.executable, str(server)], servers=1)
    try:
        prompt = "<user>Make it faster than this one:\n```cuda\n// correct 9.0\n__global__ void k() {}\n```<assistant>"
        result = leap.openrlhf.reward_func([prompt + "I cannot improve it."], [prompt], ["softmax"])
        assert result["scores"].tolist() == [0.0] and result["extra_logs"]["leap_verdict"].tolist() == [0.0]
        answered = leap.openrlhf.reward_func([prompt + "```cuda\n// wrong_answer None\n```"], [prompt], ["softmax"])
        assert answered["extra_logs"]["leap_verdict"].tolist() == [3.0]
    finally:
        leap.process_sandbox.configure()


# ---- through OpenRLHF's processes (openrlhf_model) ------------------------------------------------------

@pytest.fixture(scope="module")
def openrlhf_site(tmp_path_factory):
    """The models of OpenRLHF and Ray, on this process's path for this module only."""
    site = tmp_path_factory.mktemp("openrlhf_site")
    openrlhf_model.write_openrlhf_package(site)
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
    for name in [m for m in sys.modules if m in ("openrlhf", "ray") or m.startswith(("openrlhf.", "ray."))]:
        del sys.modules[name]


def driver(site, program_args, *, code=None):
    """A driver process (what `python3 -m ...` starts), with the models and leap on its path."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "leap.openrlhf"]
    run = subprocess.run(command + list(program_args), env=environment, capture_output=True, text=True, timeout=240)
    results = [json.loads(line[len("RESULT "):]) for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    return run, results[0] if results else None


REWARDS = [192.0, 0.0, 128.0, 0.0, 64.0, 64.0, 0.0, 0.0]  # two prompt groups of 4
ARGS = ["--algo.advantage.estimator", "dr_grpo", "--rollout.n_samples_per_prompt", "4",
        "--test_rewards", ",".join(str(r) for r in REWARDS)]


def test_a_patch_in_the_driver_does_not_reach_the_trainer_actor(openrlhf_site):
    """PPOTrainer is a Ray actor that builds its maker from its own module's global in its own process
    (ppo_trainer.py:178, 445): patch_openrlhf() in the driver changes nothing there, and OpenRLHF runs plain
    Dr.GRPO on the scores (reward minus its group's mean), clipped at +-10 (--reward.clip_range,
    models/utils.py:108-109)."""
    code = textwrap.dedent("""
        import runpy, sys
        import leap.openrlhf
        leap.openrlhf.patch_openrlhf(score_tolerance=32)
        sys.argv = ["train_ppo_ray", *sys.argv[1:]]
        runpy.run_module("openrlhf.cli.train_ppo_ray", run_name="__main__")
    """)
    run, result = driver(openrlhf_site, ARGS, code=code)
    assert result is not None, run.stderr
    assert result["maker"]["class"] == "RemoteExperienceMaker"
    assert result["advantages"] == pytest.approx([10.0, -10.0, 10.0, -10.0, 10.0, 10.0, -10.0, -10.0])


def test_the_launcher_puts_leaps_maker_in_the_trainer_actor(openrlhf_site):
    """python3 -m leap.openrlhf starts Ray with leap's worker_process_setup_hook: the trainer actor's process
    builds LeapExperienceMaker, and the advantages are leap's rank within each prompt group."""
    run, result = driver(openrlhf_site, ["--leap.score_tolerance", "32", *ARGS])
    assert result is not None, run.stderr
    assert result["maker"] == {"class": "LeapExperienceMaker", "module": "leap.openrlhf", "estimator": "rank",
                               "tolerance": 32.0}
    expected = leap.rank_advantages_of_scores(np.array(REWARDS), np.arange(8) // 4, 32.0)
    assert result["advantages"] == pytest.approx(expected.tolist(), abs=1e-6)


def test_the_launcher_refuses_another_estimator_before_anything_starts(openrlhf_site):
    run, result = driver(openrlhf_site, ["--algo.advantage.estimator", "group_norm", "--test_rewards", "1"])
    assert run.returncode != 0 and result is None
    assert "--algo.advantage.estimator dr_grpo" in run.stderr


PLANS = {
    "alpha": [[("correct", 1.0)], [("correct", 2.0)], [("correct", 1.2)], [("compile_error", None), ("correct", 1.0)]],
    "beta": [[("correct", 1.5)], [("compile_error", None), ("correct", 2.0)], [("wrong_answer", None), ("correct", 0.7)],
             [("compile_error", None), ("compile_error", None), ("correct", 1.1)]],
    "gamma": [[("lost", None)], [("compile_error", None)], [("compile_error", None)], [("correct", 1.3)]],
}


async def scripted_environment(task, completion, key):
    """The sandbox's part: the verdict the engine's script wrote into the kernel of the generated text;
    "lost" is an environment failure on every attempt."""
    source = leap.environment.extract_kernel(completion.text).source
    verdict, speedup = source.split("// ", 1)[1].split()[:2]
    assert f"task {task}" in source and f"turn {key.turn}" in source
    if verdict == "lost":
        return leap.Evaluation.environment_failed("dead-lettered")
    return leap.Evaluation(leap.Verdict.__members__[verdict], math.nan if speedup == "None" else float(speedup),
                           f"[sandbox] {verdict}")


def model_maker(estimator="rank", score_tolerance=0.0, n=4, micro=5):
    """leap's maker over the model's RemoteExperienceMaker (which pads experiences of different lengths)."""
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker as Base
    strategy = types.SimpleNamespace(args=types.SimpleNamespace(
        algo=types.SimpleNamespace(advantage=types.SimpleNamespace(estimator="dr_grpo")),
        rollout=types.SimpleNamespace(n_samples_per_prompt=n, micro_batch_size=micro),
        reward=types.SimpleNamespace(clip_range=(-10, 10))))
    Maker = leap.openrlhf.leap_experience_maker(Base, estimator, score_tolerance)
    return Maker(None, None, None, None, types.SimpleNamespace(value=0.0), strategy, None)


def rollout(site, tmp_path, agent_source, tasks, max_length=4096):
    """The rollout actor's side: the agent file loaded as OpenRLHF loads it (vllm_engine.py:19-31), every
    prompt's samples through generate_responses at once, each response made an experience."""
    from openrlhf.trainer.ppo_utils.samples_generator import process_response_into_experience
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor, _load_agent_executor
    path = tmp_path / "leap_agent.py"
    path.write_text(textwrap.dedent(agent_source))
    actor = RolloutRayActor(openrlhf_model.ScriptedEngine(PLANS), _load_agent_executor(str(path)))
    tokenizer = openrlhf_model.Tokenizer()
    params = openrlhf_model.SamplingParams(logprobs=1)

    async def all_prompts():
        return await asyncio.gather(*[actor.generate_responses(f"<user>Write the kernel for {task}<assistant>", task,
                                                               params, max_length, tokenizer, num_samples=4)
                                      for task in tasks])

    responses = [r for group in asyncio.run(all_prompts()) for r in group]
    return responses, [process_response_into_experience(r, max_length) for r in responses], actor.engine


AGENT = """
    import leap.openrlhf, test_openrlhf
    AgentExecutor = leap.openrlhf.agent_executor(max_turns=3, group_size=4,
                                                 environment=test_openrlhf.scripted_environment)
"""


def test_the_agent_executor_runs_leaps_episode_with_a_group_per_prompt(openrlhf_site, tmp_path):
    """OpenRLHF runs a prompt's n samples together (vllm_engine.py:185-209): the executor gates them as one
    group, feeds the expanded group's failures back, masks an environment failure (reward NaN), and leap's
    maker ranks the rest within each group."""
    responses, experiences, engine = rollout(openrlhf_site, tmp_path, AGENT, ["alpha", "beta", "gamma"])
    by_task = {}
    for response in responses:
        by_task.setdefault(response["label"], []).append(response)
    # alpha: 1 failure of 4, easy; beta: 3, expanded; gamma: 3 judged, 2 failures (one masked): expanded.
    assert {r["extra_logs"]["leap_expanded"] for r in by_task["alpha"]} == {0.0}
    assert sorted(r["extra_logs"]["leap_solved_turn"] for r in by_task["beta"]) == [1.0, 2.0, 2.0, 3.0]
    assert sorted(r["extra_logs"]["leap_masked"] for r in by_task["gamma"]) == [0.0, 0.0, 0.0, 1.0]
    assert sum(math.isnan(r["reward"]) for r in responses) == 1
    # Feedback tokens lie outside every action range; each turn's action range holds its completion only.
    for response in by_task["beta"]:
        text = "".join(chr(t) for t in response["observation_tokens"])
        actions = ["".join(chr(t) for t in response["observation_tokens"][a:b]) for a, b in response["action_ranges"]]
        assert len(actions) == response["extra_logs"]["leap_turns"] and all(a.startswith("Here it is.") for a in actions)
        assert text.count("[sandbox]") == len(actions) - 1
        assert len(response["rollout_log_probs"]) == len(response["observation_tokens"])
    maker = model_maker(score_tolerance=leap.scores.TURNS_ONLY_TOLERANCE)
    done = maker.compute_advantages_and_returns(maker.split_rollout_samples(experiences))
    advantage = {}
    for e in done:
        for r, row in enumerate(e.index):
            trained = e.action_mask[r] > 0
            advantage[row] = float(e.returns[r][trained][-1]) if trained.any() else None
    masked = [i for i, r in enumerate(responses) if math.isnan(r["reward"])]
    assert all(advantage[i] is None for i in masked)
    beta = [i for i, r in enumerate(responses) if r["label"] == "beta"]
    assert sorted(advantage[i] for i in beta) == pytest.approx([-1.0, 0.0, 0.0, 1.0])


def test_a_sandbox_that_cannot_start_stops_the_run_with_its_cause(openrlhf_site, tmp_path):
    """The executor lets a failure that is no environment failure propagate: generate_responses raises, and so
    ray.get in the driver, with the cause. Through OpenRLHF's single-turn executor, which catches the reward
    function's exception (agent.py:298-299), the sample has no reward and leap's maker says where the cause is."""
    missing = tmp_path / "no-such-leap-sandbox"
    agent = f"""
        import leap.openrlhf
        AgentExecutor = leap.openrlhf.agent_executor(max_turns=1, group_size=4, sandbox={{"executable": {str(missing)!r}}})
    """
    leap.process_sandbox.configure()
    try:
        with pytest.raises(FileNotFoundError, match="no-such-leap-sandbox"):
            rollout(openrlhf_site, tmp_path, agent, ["alpha"])
    finally:
        leap.process_sandbox.configure()
    from openrlhf.trainer.ppo_utils.samples_generator import process_response_into_experience
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor
    from openrlhf.utils.agent import SingleTurnAgentExecutor, logger
    reward = lambda queries, prompts, labels: leap.openrlhf.reward_func(queries, prompts, labels, sandbox=str(missing))  # noqa: E731
    actor = RolloutRayActor(openrlhf_model.ScriptedEngine(PLANS), SingleTurnAgentExecutor(reward))
    responses = asyncio.run(actor.generate_responses("<user>Write the kernel for alpha<assistant>", "alpha",
                                                     openrlhf_model.SamplingParams(), 4096, openrlhf_model.Tokenizer(),
                                                     num_samples=4))
    assert all(r["reward"] is None for r in responses) and "Failed to fetch reward" in logger.records[-1]
    experiences = [process_response_into_experience(r, 4096) for r in responses]
    maker = model_maker(micro=4)
    with pytest.raises(RuntimeError, match="4 samples came back without a reward.*agent.py:298-299"):
        maker.compute_advantages_and_returns(maker.split_rollout_samples(experiences))
