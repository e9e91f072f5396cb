# SPDX-License-Identifier: Apache-2.0
"""A model of OpenRLHF's process model and call sequence, written after OpenRLHF/OpenRLHF at commit
3c3be6234e0cb353e76bb8019947db9dfe99fca7, for tests that cannot install OpenRLHF, Ray, vLLM or DeepSpeed.
``write_openrlhf_package(directory)`` writes packages named ``openrlhf`` and ``ray`` there:

  ray                                        init(runtime_env) and actors as spawned processes: the runtime
                                             env's env_vars set and its ``worker_process_setup_hook`` called
                                             before the actor's class is imported (Ray's runtime_env), calls
                                             as messages, ray.get
  openrlhf/cli/train_ppo_ray.py              train(args): ray.init when Ray is not started yet
                                             (train_ppo_ray.py:19-32), the PPOTrainer actor (151-165), fit
  openrlhf/trainer/ppo_trainer.py            BasePPOTrainer.__init__ builds RemoteExperienceMaker, the name in
                                             its own module (ppo_trainer.py:148-186); PPOTrainer, a Ray actor (445)
  openrlhf/trainer/ppo_utils/experience_maker.py
                                             RemoteExperienceMaker.split_rollout_samples (44-77, micro batches)
                                             and compute_advantages_and_returns (238-331: rewards in prompt
                                             order, the dr_grpo branch, compute_reward's clip to
                                             --reward.clip_range and the reward on the last action token,
                                             models/utils.py:98-126, returns with gamma 1)
  openrlhf/utils/agent.py                    AgentExecutorBase; SingleTurnAgentExecutor.execute (202-301): the
                                             reward function called with the prompt and the response decoded
                                             together (283), its exception caught and logged at INFO (298-299)
  openrlhf/trainer/ray/vllm_engine.py        _load_agent_executor (19-31), RolloutRayActor.generate_responses:
                                             a prompt's n samples gathered together (185-209)
  openrlhf/trainer/ppo_utils/samples_generator.py
                                             _process_response_into_experience (247-315): sequences, the action
                                             mask from the action ranges, the reward

and, in this file, a character tokenizer and a scripted vLLM engine (its RequestOutput's token ids, text
and log-probs). Not modelled: the models' forward passes, KL, length penalties, dynamic filtering.
"""
import textwrap
from pathlib import Path

OPENRLHF_COMMIT = "3c3be6234e0cb353e76bb8019947db9dfe99fca7"

RAY = '''
import importlib
import multiprocessing
import os
import sys
import traceback

_runtime_env = None


def is_initialized():
    return _runtime_env is not None


def init(runtime_env=None, **kwargs):
    global _runtime_env
    _runtime_env = dict(runtime_env or {})


def _actor_main(connection, env_vars, hook, module_name, class_name, args, kwargs):
    try:
        os.environ.update(env_vars)
        if hook:  # runtime_env["worker_process_setup_hook"]: called as the worker starts
            module, _, function = hook.rpartition(".")
            getattr(importlib.import_module(module), function)()
        cls = getattr(importlib.import_module(module_name), class_name).__wrapped__
        instance = cls(*args, **kwargs)
        connection.send(("ok", None))
    except BaseException:
        connection.send(("error", traceback.format_exc()))
        return
    while True:
        message = connection.recv()
        if message is None:
            return
        name, args, kwargs = message
        try:
            connection.send(("ok", getattr(instance, name)(*args, **kwargs)))
        except BaseException:
            connection.send(("error", traceback.format_exc()))


class RayActorError(RuntimeError):
    pass


class _Ref:
    def __init__(self, connection):
        self.connection = connection


class _Method:
    def __init__(self, connection, name):
        self.connection, self.name = connection, name

    def remote(self, *args, **kwargs):
        self.connection.send((self.name, args, kwargs))
        return _Ref(self.connection)


class _Handle:
    def __init__(self, connection, process):
        self._connection, self._process = connection, process

    def __getattr__(self, name):
        return _Method(self._connection, name)


class _ActorClass:
    def __init__(self, cls):
        self.__wrapped__ = cls

    def remote(self, *args, **kwargs):
        if _runtime_env is None:
            init()
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        cls = self.__wrapped__
        process = context.Process(target=_actor_main, args=(
            child, {k: str(v) for k, v in _runtime_env.get("env_vars", {}).items()},
            _runtime_env.get("worker_process_setup_hook"), cls.__module__, cls.__qualname__, args, kwargs))
        process.start()
        status, detail = parent.recv()
        if status != "ok":
            raise RayActorError(detail)
        return _Handle(parent, process)


def remote(cls):
    return _ActorClass(cls)


def get(ref):
    status, value = ref.connection.recv()
    if status != "ok":
        raise RayActorError(value)
    return value
'''

EXPERIENCE_MAKER = '''
import itertools
import torch


class Experience:
    def __init__(self, rewards, action_mask, kl=None, scores=None, info=None):
        self.rewards, self.action_mask, self.scores, self.info = rewards, action_mask, scores, dict(info or {})
        self.kl = torch.zeros_like(action_mask, dtype=torch.float32) if kl is None else kl
        self.index = None

    @staticmethod
    def concat_experiences(parts, pad_token_id=0):
        width = max(p.action_mask.size(1) for p in parts)
        def pad(t):
            return torch.nn.functional.pad(t, (0, width - t.size(1)))
        rewards = None if any(p.rewards is None for p in parts) else torch.cat([p.rewards for p in parts])
        merged = Experience(rewards, torch.cat([pad(p.action_mask) for p in parts]),
                            torch.cat([pad(p.kl) for p in parts]))
        merged.index = [i for p in parts for i in p.index]
        return merged


def compute_reward(r, kl_coef, kl, action_mask=None, reward_clip_range=None):
    # openrlhf/models/utils.py:98-126
    if reward_clip_range:
        r = r.clamp(min=reward_clip_range[0], max=reward_clip_range[1])
    eos = action_mask.size(1) - 1 - action_mask.long().fliplr().argmax(dim=1, keepdim=True)
    return torch.zeros_like(kl).scatter_(dim=1, index=eos, src=r.unsqueeze(1).to(kl.dtype)) - kl_coef * kl


class RemoteExperienceMaker:
    def __init__(self, actor_model_group, critic_model_group, reward_model_group, initial_model_group,
                 kl_controller, strategy, tokenizer, **kwargs):
        self.strategy, self.args = strategy, strategy.args
        self.advantage_estimator = strategy.args.algo.advantage.estimator
        self.kl_ctl, self.tokenizer = kl_controller, tokenizer

    def split_rollout_samples(self, rollout_samples):
        for i, sample in enumerate(rollout_samples):
            sample.index = [i]
        size = self.args.rollout.micro_batch_size
        return [Experience.concat_experiences(rollout_samples[i:i + size], 0)
                for i in range(0, len(rollout_samples), size)]

    def compute_advantages_and_returns(self, experiences):
        args = self.strategy.args
        exp_len = [len(e.index) for e in experiences]
        indices = torch.tensor(list(itertools.chain.from_iterable(e.index for e in experiences)))
        raw = torch.cat([e.rewards for e in experiences], dim=0)
        rewards = torch.empty_like(raw)
        rewards[indices] = raw
        rewards = rewards.reshape(-1, args.rollout.n_samples_per_prompt)
        if args.algo.advantage.estimator in ["reinforce_baseline", "dr_grpo"]:
            rewards = rewards - rewards.mean(-1, keepdim=True)
        elif args.algo.advantage.estimator == "group_norm":
            rewards = (rewards - rewards.mean(-1, keepdim=True)) / (rewards.std(-1, keepdim=True) + 1e-9)
        rewards = rewards.reshape(-1)[indices].split(exp_len)
        for experience, reward in zip(experiences, rewards):
            reward = compute_reward(reward, self.kl_ctl.value, experience.kl, action_mask=experience.action_mask,
                                    reward_clip_range=args.reward.clip_range)
            returns = torch.zeros_like(reward)
            running = torch.zeros(reward.size(0))
            masked = experience.action_mask * reward
            for t in reversed(range(reward.size(1))):
                running = masked[:, t] + running
                returns[:, t] = running
            experience.returns, experience.advantages = returns, returns.clone()
        return experiences
'''

PPO_TRAINER = '''
import types
import ray
import torch
from openrlhf.trainer.ppo_utils.experience_maker import Experience, RemoteExperienceMaker


class BasePPOTrainer:
    def __init__(self, strategy, tokenizer=None):
        self.strategy, self.args = strategy, strategy.args
        self.kl_ctl = types.SimpleNamespace(value=0.0)
        # ppo_trainer.py:178-186: the name RemoteExperienceMaker in this module
        self.experience_maker = RemoteExperienceMaker(None, None, None, None, self.kl_ctl, self.strategy, tokenizer)


@ray.remote
class PPOTrainer(BasePPOTrainer):
    def maker(self):
        maker = self.experience_maker
        return {"class": type(maker).__qualname__, "module": type(maker).__module__,
                "estimator": getattr(maker, "leap_estimator", None),
                "tolerance": getattr(maker, "leap_score_tolerance", None)}

    def advantages(self, rewards, lengths):
        samples = []
        for reward, length in zip(rewards, lengths):
            mask = torch.zeros(1, max(lengths))
            mask[0, :length] = 1
            samples.append(Experience(torch.tensor([reward], dtype=torch.float32), mask))
        experiences = self.experience_maker.compute_advantages_and_returns(
            self.experience_maker.split_rollout_samples(samples))
        by_row = {}
        for e in experiences:
            for r, row in enumerate(e.index):
                trained = e.action_mask[r] > 0
                by_row[row] = float(e.advantages[r][trained][0]) if trained.any() else None
        return [by_row[i] for i in range(len(rewards))]
'''

TRAIN_PPO_RAY = '''
import argparse
import json
import os
import types

import ray


def train(args):
    if not ray.is_initialized():  # train_ppo_ray.py:21-32
        ray.init(runtime_env={"env_vars": {"TOKENIZERS_PARALLELISM": os.environ.get("TOKENIZERS_PARALLELISM", "true"),
                                           "NCCL_DEBUG": os.environ.get("NCCL_DEBUG", "WARN")}})
    from openrlhf.trainer.ppo_trainer import PPOTrainer
    strategy = types.SimpleNamespace(args=args)
    ppo_trainer = PPOTrainer.remote(strategy)
    rewards = [float(r) for r in args.test_rewards.split(",")]
    report = {"maker": ray.get(ppo_trainer.maker.remote()),
              "advantages": ray.get(ppo_trainer.advantages.remote(rewards, [3] * len(rewards)))}
    print("RESULT " + json.dumps(report), flush=True)


def namespaced(flat):
    args = types.SimpleNamespace()
    for key, value in vars(flat).items():
        node = args
        parts = key.split(".")
        for part in parts[:-1]:
            if not hasattr(node, part):
                setattr(node, part, types.SimpleNamespace())
            node = getattr(node, part)
        setattr(node, parts[-1], value)
    return args


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo.advantage.estimator", default="reinforce")
    parser.add_argument("--rollout.n_samples_per_prompt", type=int, default=1)
    parser.add_argument("--rollout.micro_batch_size", type=int, default=3)
    parser.add_argument("--reward.clip_range", type=float, nargs=2, default=(-10, 10))
    parser.add_argument("--train.agent_func_path", default=None)
    parser.add_argument("--test_rewards", default="0")
    train(namespaced(parser.parse_args()))
'''

AGENT = '''
import asyncio
from abc import ABC, abstractmethod
from copy import deepcopy


class _Logger:
    def __init__(self):
        self.records = []

    def info(self, message):
        self.records.append(message)


logger = _Logger()


class AgentExecutorBase(ABC):
    @abstractmethod
    async def execute(self, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=None):
        raise NotImplementedError


class SingleTurnAgentExecutor(AgentExecutorBase):
    def __init__(self, reward_func=None):
        self.reward_func = reward_func

    async def execute(self, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=None):
        prompt_token_ids = hf_tokenizer(text=prompt, add_special_tokens=False)["input_ids"]
        params = deepcopy(sampling_params)
        params.max_tokens = params.max_tokens or max(1, max_length - len(prompt_token_ids))
        output = (await llm_engine.generate(prompt_token_ids, params)).outputs[0]
        observation = prompt_token_ids + list(output.token_ids)
        result = {"prompt": prompt, "label": label, "images": images, "observation_tokens": observation,
                  "action_ranges": [(len(prompt_token_ids), len(observation))], "rollout_log_probs": None,
                  "reward": None, "scores": None, "extra_logs": {}}
        if self.reward_func is not None:
            try:  # agent.py:281-299
                query = hf_tokenizer.decode(observation, skip_special_tokens=False)
                info = (await asyncio.gather(asyncio.to_thread(self.reward_func, [query], [prompt], [label])))[0]
                score = info.get("scores")
                result.update(reward=info.get("rewards"), scores=info.get("rewards") if score is None else score,
                              extra_logs=info.get("extra_logs") or {})
            except Exception as e:
                logger.info(f"[SingleTurnExecutor] Failed to fetch reward from remote RM: {e}")
        return result
'''

VLLM_ENGINE = '''
import asyncio
import importlib.util


def _load_agent_executor(agent_func_path):
    # vllm_engine.py:19-31
    assert agent_func_path.endswith(".py"), "Agent path must be a Python file"
    spec = importlib.util.spec_from_file_location("agent_module", agent_func_path)
    agent_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent_module)
    from openrlhf.utils.agent import AgentExecutorBase
    assert hasattr(agent_module, "AgentExecutor"), "Agent module must contain AgentExecutor class"
    assert issubclass(agent_module.AgentExecutor, AgentExecutorBase), "AgentExecutor must inherit from AgentExecutorBase"
    return agent_module.AgentExecutor()


class RolloutRayActor:
    def __init__(self, engine, executor):
        self.engine, self.executor = engine, executor

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        return await self.engine.generate(prompt_token_ids, sampling_params)

    async def generate_responses(self, prompt, label, sampling_params, max_length, hf_tokenizer, num_samples=1,
                                 images=None):
        # vllm_engine.py:185-209: a prompt's samples, gathered together
        return await asyncio.gather(*[self.executor.execute(prompt=prompt, label=label, sampling_params=sampling_params,
                                                            max_length=max_length, hf_tokenizer=hf_tokenizer,
                                                            llm_engine=self, images=images)
                                      for _ in range(num_samples)])
'''

SAMPLES_GENERATOR = '''
import torch
from openrlhf.trainer.ppo_utils.experience_maker import Experience


def process_response_into_experience(response, truncate_length):
    # samples_generator.py:247-315: the action mask from the action ranges, cut to the context window
    tokens = response["observation_tokens"]
    action_mask = torch.zeros(len(tokens), dtype=torch.long)
    for start, end in response["action_ranges"]:
        action_mask[start:end] = 1
    action_mask = action_mask[1:truncate_length]
    reward = response.get("reward")
    experience = Experience(None if reward is None else torch.tensor([float(reward)]), action_mask.unsqueeze(0))
    experience.sequences = torch.tensor(tokens[:truncate_length])
    experience.info = {k: torch.tensor([float(v)]) for k, v in (response.get("extra_logs") or {}).items()}
    return experience
'''


def write_openrlhf_package(directory):
    """Writes the models of OpenRLHF and Ray (see the module's documentation) under `directory`."""
    root = Path(directory)
    files = {
        "ray/__init__.py": RAY,
        "openrlhf/__init__.py": "",
        "openrlhf/cli/__init__.py": "",
        "openrlhf/cli/train_ppo_ray.py": TRAIN_PPO_RAY,
        "openrlhf/trainer/__init__.py": "",
        "openrlhf/trainer/ppo_trainer.py": PPO_TRAINER,
        "openrlhf/trainer/ppo_utils/__init__.py": "",
        "openrlhf/trainer/ppo_utils/experience_maker.py": EXPERIENCE_MAKER,
        "openrlhf/trainer/ppo_utils/samples_generator.py": SAMPLES_GENERATOR,
        "openrlhf/trainer/ray/__init__.py": "",
        "openrlhf/trainer/ray/vllm_engine.py": VLLM_ENGINE,
        "openrlhf/utils/__init__.py": "",
        "openrlhf/utils/agent.py": AGENT,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


class Tokenizer:
    """A character tokenizer with a chat template (<role>content, <assistant> to generate) and the call
    OpenRLHF's executors make: tokenizer(text=..., add_special_tokens=False)["input_ids"]."""

    eos_token_id = None

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        return {"input_ids": [ord(c) for c in text]}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(i) for i in ids)

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=False, return_dict=None, **kwargs):
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + ("<assistant>" if add_generation_prompt else "")
        ids = [ord(c) for c in text]
        return ({"input_ids": ids} if return_dict else ids) if tokenize else text


class SamplingParams:
    def __init__(self, max_tokens=None, logprobs=None, temperature=1.0):
        self.max_tokens, self.logprobs, self.temperature = max_tokens, logprobs, temperature


def completion_text(task, member, turn, verdict, speedup):
    return f"Here it is.\n```cuda\n// {verdict} {speedup} turn {turn} member {member} task {task}\n```"


class ScriptedEngine:
    """vLLM's AsyncLLMEngine behind RolloutRayActor.generate: a conversation's first turn takes the next
    member of its task (plans[task][member], one (verdict, speedup) per turn, the last repeated); a later turn
    reads its member back from the first completion; the turn is the count of user turns. Generation stops at
    max_tokens. RequestOutput.outputs[0] holds token_ids, text and logprobs (a dict per token, with .logprob)."""

    def __init__(self, plans):
        self.plans, self.members = plans, {}
        self.calls = []

    async def generate(self, prompt_token_ids, sampling_params):
        import asyncio
        from types import SimpleNamespace
        await asyncio.sleep(0)
        text = "".join(chr(i) for i in prompt_token_ids)
        task = text.split("Write the kernel for ", 1)[1].split("<", 1)[0].strip()
        turn = text.count("<user>")
        if turn == 1:
            member = self.members.get(task, 0)
            self.members[task] = member + 1
        else:
            member = int(text.split(" member ", 1)[1].split()[0])
        plan = self.plans[task][member]
        verdict, speedup = plan[min(turn, len(plan)) - 1]
        completion = completion_text(task, member, turn, verdict, speedup)
        ids = [ord(c) for c in completion][:sampling_params.max_tokens]
        self.calls.append({"task": task, "member": member, "turn": turn, "max_tokens": sampling_params.max_tokens})
        logprobs = None if sampling_params.logprobs is None else \
            [{t: SimpleNamespace(logprob=-0.5)} for t in ids]
        output = SimpleNamespace(token_ids=ids, text="".join(chr(i) for i in ids), logprobs=logprobs,
                                 finish_reason="length" if len(ids) == sampling_params.max_tokens else "stop")
        return SimpleNamespace(outputs=[output])
