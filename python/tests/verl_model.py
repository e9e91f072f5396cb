# SPDX-License-Identifier: Apache-2.0
"""A minimal model of verl's call sequence, written here after verl's source at commit
b178a3cd56f58b2d502255daba591e92833930a7 (volcengine/verl, 2026-01-29), for tests that cannot
install verl. ``write_verl_package(directory)`` writes a package named ``verl`` with the module paths
leap imports, modelling:

  verl/trainer/ppo/core_algos.py   register_adv_est, get_adv_estimator_fn, compute_grpo_outcome_advantage
  verl/trainer/ppo/ray_trainer.py  compute_advantage (the grpo branch and the registry branch)
  verl/protocol.py                 DataProto: repeat(interleave=True), chunk (equal contiguous chunks),
                                   concat, union
  verl/experimental/agent_loop/agent_loop.py
                                   AgentLoopBase (__init__, apply_chat_template), AgentLoopOutput,
                                   AgentLoopMetrics, DictConfigWrap, register/_agent_loop_registry,
                                   AgentLoopWorker.generate_sequences/_run_agent_loop/_postprocess
                                   (hydra.utils.instantiate of the registry entry, rm_scores on the
                                   last response token, reward_extra_info into non_tensor_batch),
                                   AgentLoopManager.generate_sequences (chunk per worker; each worker
                                   here a spawned process, as Ray actors are processes)

and, in this file, RayPPOTrainer.fit's steps from the batch to the advantages (``fit_step``).
Pydantic, Ray, Hydra, tensordict and a tokenizer are replaced by plain classes, a process pool,
an import of ``_target_`` and a character tokenizer. Not modelled: padding-enabled chunking, the
reward loop (the agent loop sets reward_score, which verl's worker then keeps), KL in the reward,
balance_batch (a reordering after the advantages' inputs are fixed), multi-modal inputs, tracing.
"""
import textwrap
from pathlib import Path

CORE_ALGOS = '''
from collections import defaultdict
from enum import Enum
import torch

class AdvantageEstimator(str, Enum):
    GAE = "gae"
    GRPO = "grpo"

ADV_ESTIMATOR_REGISTRY = {}

def register_adv_est(name_or_enum):
    def decorator(fn):
        name = name_or_enum.value if isinstance(name_or_enum, Enum) else name_or_enum
        if name in ADV_ESTIMATOR_REGISTRY and ADV_ESTIMATOR_REGISTRY[name] != fn:
            raise ValueError(f"Adv estimator {name} has already been registered")
        ADV_ESTIMATOR_REGISTRY[name] = fn
        return fn
    return decorator

def get_adv_estimator_fn(name_or_enum):
    name = name_or_enum.value if isinstance(name_or_enum, Enum) else name_or_enum
    if name not in ADV_ESTIMATOR_REGISTRY:
        raise ValueError(f"Unknown advantage estimator simply: {name}")
    return ADV_ESTIMATOR_REGISTRY[name]

@register_adv_est(AdvantageEstimator.GRPO)
def compute_grpo_outcome_advantage(token_level_rewards, response_mask, index, epsilon=1e-6,
                                   norm_adv_by_std_in_grpo=True, config=None):
    # per uid: mean and unbiased std of the summed scores (a group of one: 0 and 1), row by row
    scores = token_level_rewards.sum(dim=-1)
    rows = defaultdict(list)
    with torch.no_grad():
        for i in range(scores.shape[0]):
            rows[index[i]].append(i)
        centre, spread = {}, {}
        for uid, members in rows.items():
            values = torch.stack([scores[i] for i in members])
            centre[uid] = values.mean() if len(members) > 1 else torch.tensor(0.0)
            spread[uid] = values.std() if len(members) > 1 else torch.tensor(1.0)
        for i in range(scores.shape[0]):
            shifted = scores[i] - centre[index[i]]
            scores[i] = shifted / (spread[index[i]] + epsilon) if norm_adv_by_std_in_grpo else shifted
        scores = scores.unsqueeze(-1) * response_mask
    return scores, scores
'''

RAY_TRAINER = '''
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.core_algos import AdvantageEstimator

def compute_advantage(data, adv_estimator, gamma=1.0, lam=1.0, num_repeat=1, norm_adv_by_std_in_grpo=True,
                      config=None):
    if adv_estimator == AdvantageEstimator.GRPO:
        advantages, returns = core_algos.compute_grpo_outcome_advantage(
            token_level_rewards=data.batch["token_level_rewards"], response_mask=data.batch["response_mask"],
            index=data.non_tensor_batch["uid"], norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo)
    else:
        fn = core_algos.get_adv_estimator_fn(adv_estimator)
        kwargs = {"token_level_rewards": data.batch["token_level_rewards"],
                  "response_mask": data.batch["response_mask"], "config": config}
        if "uid" in data.non_tensor_batch:
            kwargs["index"] = data.non_tensor_batch["uid"]
        advantages, returns = fn(**kwargs)
    data.batch["advantages"] = advantages
    data.batch["returns"] = returns
    return data
'''

PROTOCOL = '''
import numpy as np
import torch

class DataProto:
    def __init__(self, batch=None, non_tensor_batch=None, meta_info=None):
        self.batch = dict(batch or {})
        self.non_tensor_batch = dict(non_tensor_batch or {})
        self.meta_info = dict(meta_info or {})

    def __len__(self):
        if self.batch:
            return next(iter(self.batch.values())).shape[0]
        return len(next(iter(self.non_tensor_batch.values())))

    def repeat(self, repeat_times=2, interleave=True):
        assert interleave
        return DataProto({k: v.repeat_interleave(repeat_times, dim=0) for k, v in self.batch.items()},
                         {k: np.repeat(v, repeat_times, axis=0) for k, v in self.non_tensor_batch.items()},
                         self.meta_info)

    def chunk(self, chunks):
        assert len(self) % chunks == 0, f"only support equal chunk. Got size of DataProto {len(self)} and chunk {chunks}."
        size = len(self) // chunks
        return [DataProto({k: v[i * size:(i + 1) * size] for k, v in self.batch.items()},
                          {k: v[i * size:(i + 1) * size] for k, v in self.non_tensor_batch.items()},
                          self.meta_info) for i in range(chunks)]

    @staticmethod
    def concat(parts):
        batch = {k: torch.cat([p.batch[k] for p in parts]) for k in parts[0].batch}
        non_tensor = {k: np.concatenate([p.non_tensor_batch[k] for p in parts]) for k in parts[0].non_tensor_batch}
        return DataProto(batch, non_tensor, parts[0].meta_info)

    def union(self, other):
        for k, v in other.batch.items():
            assert k not in self.batch or torch.equal(self.batch[k], v), k
            self.batch[k] = v
        for k, v in other.non_tensor_batch.items():
            assert k not in self.non_tensor_batch or len(v) == len(self.non_tensor_batch[k]), k
            self.non_tensor_batch[k] = v
        self.meta_info.update(other.meta_info)
        return self
'''

AGENT_LOOP = '''
import asyncio
import importlib
import numpy as np
import torch
from verl.protocol import DataProto

class AgentLoopMetrics:
    def __init__(self, generate_sequences=0.0, tool_calls=0.0, num_preempted=-1):
        self.generate_sequences, self.tool_calls, self.num_preempted = generate_sequences, tool_calls, num_preempted

class AgentLoopOutput:
    # pydantic model in verl: these fields, reward_score and extra_fields optional
    def __init__(self, *, prompt_ids, response_ids, response_mask, metrics, response_logprobs=None,
                 routed_experts=None, multi_modal_data=None, reward_score=None, num_turns=0, extra_fields=None):
        assert all(isinstance(t, int) for t in prompt_ids + response_ids + response_mask)
        assert len(response_ids) == len(response_mask)
        assert response_logprobs is None or len(response_logprobs) == len(response_ids)
        self.prompt_ids, self.response_ids, self.response_mask = prompt_ids, response_ids, response_mask
        self.response_logprobs, self.reward_score, self.num_turns = response_logprobs, reward_score, num_turns
        self.metrics = metrics if isinstance(metrics, AgentLoopMetrics) else AgentLoopMetrics(**metrics)
        self.extra_fields = dict(extra_fields or {})

class DictConfigWrap:
    def __init__(self, config):
        self.config = config

class AgentLoopBase:
    def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, dataset_config, **kwargs):
        self.config = trainer_config.config
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.processor = processor
        self.dataset_cls = dataset_cls
        self.dataset_config = dataset_config.config
        self.apply_chat_template_kwargs = self.dataset_config.get("apply_chat_template_kwargs", {})
        self.loop = asyncio.get_event_loop()

    async def apply_chat_template(self, messages, tools=None, images=None, videos=None, remove_system_prompt=False):
        return await self.loop.run_in_executor(
            None, lambda: self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                                             tokenize=True, **self.apply_chat_template_kwargs))

    async def run(self, sampling_params, **kwargs):
        raise NotImplementedError

_agent_loop_registry = {}

def register(agent_name):
    def decorator(subclass):
        _agent_loop_registry[agent_name] = {"_target_": f"{subclass.__module__}.{subclass.__qualname__}"}
        return subclass
    return decorator

def _instantiate(config, **kwargs):
    # hydra.utils.instantiate: import _target_, pass the entry's other keys and the call's keywords
    module, _, name = config["_target_"].rpartition(".")
    target = getattr(importlib.import_module(module), name)
    return target(**{k: v for k, v in config.items() if k != "_target_"}, **kwargs)

class AgentLoopWorker:
    def __init__(self, config, server_manager, tokenizer, agent_loop_configs=()):
        self.config, self.server_manager, self.tokenizer = config, server_manager, tokenizer
        for entry in agent_loop_configs:  # agent_loop_config_path's entries
            _agent_loop_registry[entry["name"]] = dict(entry)

    async def generate_sequences(self, batch):
        config = self.config.actor_rollout_ref.rollout
        sampling_params = dict(temperature=config.temperature, top_p=1.0, top_k=-1, repetition_penalty=1.0,
                               logprobs=False)
        if "agent_name" not in batch.non_tensor_batch:
            batch.non_tensor_batch["agent_name"] = np.array([config.agent.default_agent_loop] * len(batch), dtype=object)
        tasks = []
        for i in range(len(batch)):
            kwargs = {k: v[i] for k, v in batch.non_tensor_batch.items()}
            tasks.append(asyncio.create_task(self._run_agent_loop(sampling_params, **kwargs)))
        outputs = await asyncio.gather(*tasks)
        return self._postprocess(outputs)

    async def _run_agent_loop(self, sampling_params, *, agent_name, **kwargs):
        assert agent_name in _agent_loop_registry, f"Agent loop {agent_name} not registered"
        agent_loop = _instantiate(_agent_loop_registry[agent_name], trainer_config=DictConfigWrap(self.config),
                                  server_manager=self.server_manager, tokenizer=self.tokenizer, processor=None,
                                  dataset_cls=None, dataset_config=DictConfigWrap(self.config.data))
        output = await agent_loop.run(sampling_params, **kwargs)
        output.extra_fields["raw_prompt"] = kwargs["raw_prompt"]
        assert output.reward_score is not None, "this model has no reward loop: the agent loop must score"
        return output

    def _postprocess(self, outputs):
        rollout = self.config.actor_rollout_ref.rollout
        P, R, pad = rollout.prompt_length, rollout.response_length, 0
        rows = len(outputs)
        prompts = torch.full((rows, P), pad, dtype=torch.long)
        responses = torch.full((rows, R), pad, dtype=torch.long)
        response_mask = torch.zeros((rows, R), dtype=torch.long)
        attention = torch.zeros((rows, P + R), dtype=torch.long)
        for i, o in enumerate(outputs):
            p, r = o.prompt_ids[-P:], o.response_ids[:R]
            prompts[i, P - len(p):] = torch.tensor(p)
            responses[i, :len(r)] = torch.tensor(r)
            response_mask[i, :len(r)] = torch.tensor(o.response_mask[:R])
            attention[i, P - len(p):P] = 1
            attention[i, P:P + len(r)] = 1
        batch = {"prompts": prompts, "responses": responses, "response_mask": response_mask,
                 "input_ids": torch.cat([prompts, responses], dim=1), "attention_mask": attention}
        if outputs[0].response_logprobs is not None:
            logprobs = torch.zeros((rows, R))
            for i, o in enumerate(outputs):
                logprobs[i, :len(o.response_logprobs[:R])] = torch.tensor(o.response_logprobs[:R])
            batch["rollout_log_probs"] = logprobs
        scores = [o.reward_score for o in outputs]
        if all(s is not None for s in scores):
            last = attention[:, P:].sum(dim=1) - 1
            rm_scores = torch.zeros_like(response_mask, dtype=torch.float32)
            rm_scores[torch.arange(rows), last] = torch.tensor(scores, dtype=torch.float32)
            batch["rm_scores"] = rm_scores
        non_tensor = {"__num_turns__": np.array([o.num_turns for o in outputs], dtype=np.int32)}
        infos = [o.extra_fields.get("reward_extra_info", {}) for o in outputs]
        keys = list(infos[0].keys())
        for key in keys:
            non_tensor[key] = np.array([info[key] for info in infos])
        for key in set(k for o in outputs for k in o.extra_fields):
            column = np.empty(rows, dtype=object)
            column[:] = [o.extra_fields.get(key) for o in outputs]
            non_tensor[key] = column
        meta = {"metrics": [vars(o.metrics) for o in outputs]}
        if "rm_scores" in batch:
            meta["reward_extra_keys"] = keys
        return DataProto(batch, non_tensor, meta)
'''


def write_verl_package(directory):
    """Writes the model of verl (see the module's documentation) under directory/verl."""
    root = Path(directory) / "verl"
    files = {
        "__init__.py": "",
        "protocol.py": PROTOCOL,
        "trainer/__init__.py": "",
        "trainer/ppo/__init__.py": "",
        "trainer/ppo/core_algos.py": CORE_ALGOS,
        "trainer/ppo/ray_trainer.py": RAY_TRAINER,
        "experimental/__init__.py": "",
        "experimental/agent_loop/__init__.py": "",
        "experimental/agent_loop/agent_loop.py": AGENT_LOOP,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


# ---- the scripted parts: a character tokenizer, a policy behind verl's server-manager call, a sandbox ----

class CharTokenizer:
    """Token = character code; the chat template writes <role>content and opens <assistant>."""

    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)

    def apply_chat_template(self, messages, tools=None, add_generation_prompt=True, tokenize=True, **kwargs):
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + ("<assistant>" if add_generation_prompt else "")
        return self.encode(text) if tokenize else text


class ScriptedServer:
    """verl's AsyncLLMServerManager.generate(request_id, *, prompt_ids, sampling_params): the k-th
    sample of a task (in this worker, from `offsets[task]` on) follows plans[task][k], one
    (verdict, speedup) per turn, the last repeated. A request id is one sample's conversation."""

    def __init__(self, plans, offsets):
        self.plans, self.next = plans, dict(offsets)
        self.samples = {}

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, video_data=None):
        import asyncio
        from types import SimpleNamespace
        await asyncio.sleep(0)
        text = "".join(chr(i) for i in prompt_ids)
        task = text.split("Write the kernel for ", 1)[1].split("<", 1)[0]
        if request_id not in self.samples:
            self.samples[request_id] = [task, self.next.get(task, 0), 0]
            self.next[task] = self.next.get(task, 0) + 1
        state = self.samples[request_id]
        state[2] += 1
        plan = self.plans[task][state[1]]
        verdict, speedup = plan[min(state[2], len(plan)) - 1]
        completion = (f"Here it is.\n```cuda\n// {task} sample {state[1]} turn {state[2]}: {verdict} {speedup}\n"
                      f"__global__ void k(float* x) {{ x[0] = 1; }}\n```")
        return SimpleNamespace(token_ids=[ord(c) for c in completion], log_probs=None, num_preempted=None)


async def scripted_environment(task, completion, key):
    """The sandbox's part (an episode environment): the verdict and speedup the policy's script wrote
    into the kernel, which leap.environment.extract_kernel takes from the completion; the verdict
    "lost" is an environment failure on every attempt (a dead-lettered request)."""
    import leap
    from leap.environment import extract_kernel
    kernel = extract_kernel(completion.text)
    assert kernel.fenced and kernel.has_kernel, kernel
    head = kernel.source.split("\n", 1)[0]
    claimed_task = head[3:].split(" sample ", 1)[0]
    verdict, speedup = head.rsplit(":", 1)[1].split()
    assert claimed_task == task, (claimed_task, task)
    if verdict == "lost":
        return leap.Evaluation.environment_failed(f"dead-lettered (attempt {key.attempt})")
    return leap.Evaluation(leap.Verdict.__members__[verdict], float(speedup) if speedup != "None" else float("nan"),
                           f"[sandbox] {verdict} on {head[3:]}")


def run_worker(config, chunk, plans, offsets, agent_loop_configs):
    """One AgentLoopWorker process: generate_sequences on its chunk. Returns the DataProto, with
    the warnings it raised in meta_info["warnings"]."""
    import asyncio
    import warnings
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        worker = AgentLoopWorker(config, ScriptedServer(plans, offsets), CharTokenizer(), agent_loop_configs)
        output = asyncio.run(worker.generate_sequences(chunk))
    output.meta_info["warnings"] = [str(w.message) for w in caught]
    return output


def fit_step(config, rows, plans, agent_loop_configs, pool):
    """RayPPOTrainer.fit's steps at the pinned commit, async rollout mode, from a batch of dataset rows
    to the rewards: a uid per prompt, repeat(n, interleave=True), AgentLoopManager.generate_sequences
    (chunk per worker), repeat and union, the rm_scores path of _compute_or_extract_reward,
    token_level_rewards = token_level_scores (use_kl_in_reward=False). Returns the batch and the
    workers' warnings; compute_advantage is the caller's (see advantages)."""
    import uuid
    import numpy as np
    from verl.protocol import DataProto
    batch = DataProto(non_tensor_batch={k: _objects([r[k] for r in rows]) for k in rows[0]})
    batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in rows], dtype=object)
    gen_batch = DataProto(non_tensor_batch=dict(batch.non_tensor_batch))  # async mode keeps the reward keys
    n = config.actor_rollout_ref.rollout.n
    gen_batch_output = gen_batch.repeat(repeat_times=n, interleave=True)
    chunks = gen_batch_output.chunk(config.actor_rollout_ref.rollout.agent.num_workers)
    jobs, seen = [], {}
    for chunk in chunks:  # where each worker's samples of a task start in the task's plan list
        offsets = {}
        for uid, task in zip(chunk.non_tensor_batch["uid"], chunk.non_tensor_batch["extra_info"]):
            offsets.setdefault(task["leap_task"], seen.get(uid, 0))
            seen[uid] = seen.get(uid, 0) + 1
        jobs.append((config, chunk, plans, offsets, agent_loop_configs))
    outputs = pool.starmap(run_worker, jobs)
    warnings = [w for o in outputs for w in o.meta_info.pop("warnings")]
    gen_output = DataProto.concat(outputs)
    batch = batch.repeat(repeat_times=n, interleave=True)
    batch = batch.union(gen_output)
    reward_tensor = batch.batch["rm_scores"]
    extra = {k: batch.non_tensor_batch[k] for k in batch.meta_info.get("reward_extra_keys", [])}
    batch.batch["token_level_scores"] = reward_tensor
    batch.non_tensor_batch.update({k: np.array(v) for k, v in extra.items()})
    batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]
    return batch, warnings


def advantages(batch, config):
    """The advantage step of fit: compute_advantage with the algorithm config, as the trainer calls it."""
    from verl.trainer.ppo.ray_trainer import compute_advantage
    algorithm = config.algorithm
    return compute_advantage(batch, adv_estimator=algorithm.adv_estimator, gamma=algorithm.gamma, lam=algorithm.lam,
                             num_repeat=config.actor_rollout_ref.rollout.n,
                             norm_adv_by_std_in_grpo=algorithm.get("norm_adv_by_std_in_grpo", True),
                             config=algorithm).batch["advantages"]


def _objects(values):
    import numpy as np
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column
