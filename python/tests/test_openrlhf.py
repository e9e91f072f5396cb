# SPDX-License-Identifier: Apache-2.0
"""leap.openrlhf through OpenRLHF's call sequence, modelled here after OpenRLHF/OpenRLHF at commit
3c3be6234e0cb353e76bb8019947db9dfe99fca7: RemoteExperienceMaker.split_rollout_samples (index =
position, micro batches of rollout.micro_batch_size, so a prompt group can straddle experiences) and
compute_advantages_and_returns (apply_length_penalties with none configured, the rewards put back in
prompt order and viewed (-1, n_samples_per_prompt), the dr_grpo branch, compute_reward with the KL
term, get_cumulative_returns with gamma 1), the trainer module's RemoteExperienceMaker name that
patch_openrlhf replaces, and the reward function's dict. Exercised: leap_experience_maker,
patch_openrlhf, reward_func against a stand-in serve. Not exercised: a real OpenRLHF, Ray, vLLM,
the models' forward passes, multi-turn agent executors, length penalties."""
import itertools
import math
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import leap  # noqa: E402
import leap.openrlhf  # noqa: E402
import leap.sandbox  # noqa: E402
import leap.verl  # noqa: E402


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
    scores = [leap.verl.turn_and_speedup_score(int(t), 3, float(s)) for t, s in zip(turns, speedup)]
    Maker = leap.openrlhf.leap_experience_maker(RemoteExperienceMaker, score_tolerance=leap.verl.TURNS_ONLY_TOLERANCE)
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
    Maker = leap.openrlhf.leap_experience_maker(RemoteExperienceMaker, score_tolerance=leap.verl.TURNS_ONLY_TOLERANCE)
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
    leap.verl.configure_sandbox([sys.executable, str(server)], servers=1)
    try:
        queries = ["prompt\n```cuda\n// correct 2.0\n```", "prompt\n```cuda\n// wrong_answer None\n```"]
        result = leap.openrlhf.reward_func(queries, ["prompt", "prompt"], ["softmax", '{"name": "custom"}'])
    finally:
        leap.verl.configure_sandbox()
    assert result["rewards"].tolist() == pytest.approx([leap.verl.turn_and_speedup_score(1, 1, 2.0), 0.0])
    assert result["scores"].tolist() == [1.0, 0.0]
    assert result["extra_logs"]["leap_verdict"].tolist() == [4.0, 3.0]
    assert result["extra_logs"]["leap_speedup"][0] == 2.0 and math.isnan(result["extra_logs"]["leap_speedup"][1])


def test_reward_func_retries_an_environment_failure_then_raises(tmp_path):
    server = tmp_path / "serve.py"
    server.write_text(SCRIPTED_SERVE)
    leap.verl.configure_sandbox([sys.executable, str(server)], servers=1)
    try:
        result = leap.openrlhf.reward_func(["```cuda\n// correct 2.0 lostonce\n```"], ["prompt"], ["softmax"])
        assert result["scores"].tolist() == [1.0]  # the retry's verdict
        with pytest.raises(leap.sandbox.SandboxError, match="delivered 3 times"):
            leap.openrlhf.reward_func(["```cuda\n// correct 2.0 lostonce again\n```"], ["prompt"], ["softmax"],
                                      environment_retries=0)
    finally:
        leap.verl.configure_sandbox()
