# SPDX-License-Identifier: Apache-2.0
"""A model of verl's process model and call sequence, written here after verl-project/verl at commit
1dda039b9c6311889a9c9a26040677e1254814f9 (2026-08-22; the project moved there from volcengine/verl),
for tests that cannot install verl (nor Ray, Hydra, pydantic, tensordict, vLLM or a tokenizer).

Processes, as Ray makes them (each one a spawned interpreter that imports only what the configuration
names; Ray's job-level ``runtime_env`` env_vars are set in each before anything is imported):

  the launcher (the test's own process)   main_ppo.main/run_ppo (verl/trainer/main_ppo.py:34-93):
                                          ray.init's runtime_env is verl's defaults merged with
                                          ``ray_kwargs.ray_init.runtime_env`` (main_ppo.py:62-74)
  TaskRunnerV1 (``task_runner``)          a Ray actor: ``import verl`` (verl/__init__.py:49-76 imports
                                          $VERL_USE_EXTERNAL_MODULES and the ``verl.plugins`` entry
                                          points), then PPOTrainer.init/fit (main_ppo.py:133-163,
                                          verl/trainer/ppo/v1/trainer_base.py:387-420): validation
                                          first (val_before_train), then steps; the advantage in this
                                          process (trainer_base.py:1638-1690)
  AgentLoopWorkerTQ x num_workers         Ray actors made at start-up (agent_loop.py:1177-1199), each
                                          ``import verl`` too; the agent-loop config file's entries
                                          into the registry (agent_loop.py:502-509); per prompt
                                          ``_run_prompt``: rollout.n (val_kwargs.n when validating)
                                          sessions, each ``_run_agent_loop(..., session_id=i, **prompt)``
                                          (verl/trainer/ppo/v1/agent_loop_tq.py:107-129), hydra's
                                          instantiate of the entry (agent_loop.py:631-665)

and the legacy trainer (``trainer.use_v1=False``, verl/trainer/main_ppo_v0.py, deprecated), whose
driver repeats each prompt n times (interleaved) and splits the repeated batch into num_workers equal
contiguous chunks (agent_loop.py:1201-1220), so a group can straddle two workers.

The package ``write_verl_package(directory)`` writes holds, under verl's module paths:

  verl/__init__.py                          the external modules and plugins (verl/__init__.py:49-76)
  verl/trainer/ppo/core_algos.py            register_adv_est, get_adv_estimator_fn (core_algos.py:113-150),
                                            compute_grpo_outcome_advantage
  verl/trainer/ppo/ray_trainer.py           compute_advantage (ray_trainer.py:186-281)
  verl/utils/tokenizer/continuous_token.py  MergeResult, ContinuousTokenBuilder (continuous_token.py:37-366)
  verl/experimental/agent_loop/agent_loop.py
                                            AgentLoopOutput (agent_loop.py:88-113), AgentLoopBase with the
                                            Continuous Token methods (agent_loop.py:207-431), register and
                                            the registry (agent_loop.py:437-448), AgentLoopWorker
                                            (agent_loop.py:461-665), _compute_multi_modal_inputs for a
                                            worker with a processor (agent_loop.py:838-848; the release
                                            before 1dda039, b178a3cd, called multi_modal_data.get there
                                            without a guard: agent_loop.py:648 at b178a3cd)
  verl/trainer/ppo/v1/agent_loop_tq.py      AgentLoopWorkerTQ.generate_sequences/_run_prompt
                                            (agent_loop_tq.py:59-148)

and, in this file, the rollout server (vLLM's max_tokens rule: verl/workers/rollout/vllm_rollout/
vllm_async_server.py:566-597: without max_tokens a call may generate min(response_length,
prompt_length + response_length - len(prompt_ids)) tokens; with it, that many, at least 1), the
response padding and rm_scores (agent_loop_tq.py:150-227 with AgentLoopOutput.as_dict, agent_loop.py:
114-158: the response cut at response_length, the reward on the last response token), validation
(trainer_base.py:961-1114: the numeric reward_extra_info averaged per key) and the advantage step.
Replaced: Ray (processes and pipes), TransferQueue (the records are sent back), Hydra (import of
``_target_``), pydantic (plain classes that check the same fields), the tokenizer (characters).
"""
import os
import sys
import textwrap
import traceback
from pathlib import Path

VERL_COMMIT = "1dda039b9c6311889a9c9a26040677e1254814f9"

INIT = '''
import importlib
import logging
import os

# verl/__init__.py:49-52: the modules named in VERL_USE_EXTERNAL_MODULES, imported as verl is.
modules = os.getenv("VERL_USE_EXTERNAL_MODULES", "")
if modules:
    for module in modules.split(","):
        importlib.import_module(module)

# verl/__init__.py:60-76: the "verl.plugins" entry points (VERL_USE_EXTERNAL_PLUGINS: auto | none | names);
# a plugin that fails to load is logged at debug level and passed over.
_plugins_policy = os.getenv("VERL_USE_EXTERNAL_PLUGINS", "auto").strip().lower()
if _plugins_policy != "none":
    from importlib.metadata import entry_points as _entry_points
    _allowed = None if _plugins_policy == "auto" else {n.strip() for n in _plugins_policy.split(",") if n.strip()}
    for _ep in _entry_points(group="verl.plugins"):
        if _allowed is not None and _ep.name not in _allowed:
            continue
        try:
            _ep.load()
        except Exception as _e:
            logging.getLogger(__name__).debug("Failed to load plugin '%s': %s", _ep.name, _e)
'''

CORE_ALGOS = '''
from collections import defaultdict
from enum import Enum

class AdvantageEstimator(str, Enum):
    GAE = "gae"
    GRPO = "grpo"

ADV_ESTIMATOR_REGISTRY = {}

def register_adv_est(name_or_enum):
    def decorator(fn):
        name = name_or_enum.value if isinstance(name_or_enum, Enum) else name_or_enum
        if name in ADV_ESTIMATOR_REGISTRY and ADV_ESTIMATOR_REGISTRY[name] != fn:
            raise ValueError(f"Adv estimator {name} has already been registered: {ADV_ESTIMATOR_REGISTRY[name]} vs {fn}")
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
    import torch  # (verl imports it at the top; here only the task runner needs it, which saves the workers a second)
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
            token_level_rewards=data["token_level_rewards"], response_mask=data["response_mask"],
            index=data["uid"], norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo)
    else:
        adv_estimator_fn = core_algos.get_adv_estimator_fn(adv_estimator)
        adv_kwargs = {"token_level_rewards": data["token_level_rewards"], "response_mask": data["response_mask"],
                      "config": config}
        if "uid" in data:
            adv_kwargs["index"] = data["uid"]
        advantages, returns = adv_estimator_fn(**adv_kwargs)
    data["advantages"], data["returns"] = advantages, returns
    return data
'''

CONTINUOUS_TOKEN = '''
from dataclasses import dataclass, field

@dataclass
class MergeResult:
    token_ids: list
    appended_token_count: int
    kind: str = "non_assistant"
    inserted_token_ids: list = field(default_factory=list)
    removed_prefix_token_count: int = 0

class ContinuousTokenBuilder:
    def __init__(self, tokenizer, chat_template_kwargs=None):
        self.tokenizer = tokenizer
        self.chat_template_kwargs = dict(chat_template_kwargs or {})

    def _render_tokens(self, messages, add_generation_prompt, tools=None):
        # continuous_token.py:182-197: apply_chat_template(tokenize=True), normalised to a list of ints
        rendered = self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                                                      tokenize=True, **self.chat_template_kwargs)
        return list(rendered["input_ids"]) if isinstance(rendered, dict) else list(rendered)

    def build_initial_tokens(self, messages, *, tools=None, images=None, videos=None, audios=None):
        return self._render_tokens(messages, add_generation_prompt=True, tools=tools)

    def tokenize_non_assistant_incremental_messages(self, previous_messages, updated_messages, *, tools=None):
        assert list(updated_messages[:len(previous_messages)]) == list(previous_messages), "append only"
        appended = updated_messages[len(previous_messages):]
        if not appended:
            return []
        ids = []
        so_far = list(previous_messages)
        for message in appended:
            assert message["role"] in ("user", "system", "tool"), message["role"]
            before = self._render_tokens(so_far, add_generation_prompt=False, tools=tools)
            so_far.append(message)
            after = self._render_tokens(so_far, add_generation_prompt=False, tools=tools)
            assert after[:len(before)] == before
            ids.extend(after[len(before):])
        full = self._render_tokens(updated_messages, add_generation_prompt=True, tools=tools)
        plain = self._render_tokens(updated_messages, add_generation_prompt=False, tools=tools)
        ids.extend(full[len(plain):])
        return ids

    def merge_non_assistant_tokens(self, previous_messages, updated_messages, runtime_token_ids, *, tools=None):
        appended = self.tokenize_non_assistant_incremental_messages(previous_messages, updated_messages, tools=tools)
        return MergeResult(list(runtime_token_ids) + appended, len(appended), "non_assistant")

    def merge_assistant_tokens(self, runtime_token_ids, assistant_token_ids):
        return MergeResult(list(runtime_token_ids) + list(assistant_token_ids), len(assistant_token_ids), "assistant")

    def align_response_metadata(self, merge_result, response_mask, response_logprobs=None, *, assistant_logprobs=None):
        # continuous_token.py:308-364
        mask = list(response_mask)
        logprobs = list(response_logprobs) if response_logprobs is not None else None
        if logprobs is None and assistant_logprobs is not None:
            raise ValueError("response_logprobs is required when assistant_logprobs is provided")
        if merge_result.kind == "assistant":
            mask += [1] * merge_result.appended_token_count
            if logprobs is not None:
                if assistant_logprobs is None:
                    if merge_result.appended_token_count:
                        raise ValueError("assistant_logprobs is required for assistant Continuous Token alignment")
                    assistant_logprobs = []
                if len(assistant_logprobs) != merge_result.appended_token_count:
                    raise ValueError("assistant_logprobs length must match appended assistant token count")
                logprobs += list(assistant_logprobs)
        else:
            mask += [0] * merge_result.appended_token_count
            if logprobs is not None:
                logprobs += [0.0] * merge_result.appended_token_count
        return mask, logprobs

    @classmethod
    def supports_multimodal(cls):
        return False
'''

AGENT_LOOP = '''
import asyncio
import importlib
from verl.utils.tokenizer.continuous_token import ContinuousTokenBuilder

class AgentLoopMetrics:
    def __init__(self, generate_sequences=0.0, tool_calls=0.0, compute_score=0.0, num_preempted=-1):
        self.generate_sequences, self.tool_calls = generate_sequences, tool_calls
        self.compute_score, self.num_preempted = compute_score, num_preempted

class AgentLoopOutput:
    # agent_loop.py:88-113, a pydantic model: these fields, type-checked as pydantic would
    def __init__(self, *, prompt_ids, response_ids, response_mask, metrics, response_logprobs=None,
                 routed_experts=None, multi_modal_data=None, reward_score=None, num_turns=0, extra_fields=None,
                 mm_processor_kwargs=None):
        for name, value in (("prompt_ids", prompt_ids), ("response_ids", response_ids), ("response_mask", response_mask)):
            assert isinstance(value, list) and all(isinstance(t, int) for t in value), f"{name} must be list[int]"
        assert response_logprobs is None or all(isinstance(v, float) for v in response_logprobs)
        assert multi_modal_data is None or isinstance(multi_modal_data, dict)
        self.prompt_ids, self.response_ids, self.response_mask = prompt_ids, response_ids, response_mask
        self.response_logprobs, self.reward_score, self.num_turns = response_logprobs, reward_score, num_turns
        self.multi_modal_data, self.mm_processor_kwargs = multi_modal_data, mm_processor_kwargs
        self.metrics = metrics if isinstance(metrics, AgentLoopMetrics) else AgentLoopMetrics(**metrics)
        self.extra_fields = dict(extra_fields or {})

class DictConfigWrap:
    def __init__(self, config):
        self.config = config

class ToolListWrap:
    def __init__(self, tools):
        self.tools = tools

class AgentLoopBase:
    def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config,
                 hf_model_type=None, **kwargs):
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.processor = processor
        self.dataset_cls = dataset_cls
        self.data_config = data_config.config
        self.apply_chat_template_kwargs = self.data_config.get("apply_chat_template_kwargs", {})
        self.mm_processor_kwargs = self.data_config.get("mm_processor_kwargs", {})
        self.continuous_token_builder = ContinuousTokenBuilder(tokenizer, self.apply_chat_template_kwargs)
        self.loop = asyncio.get_event_loop()

    async def process_multi_modal_info(self, messages):
        return {}  # text prompts (agent_loop.py:285-313 with no images, videos or audios)

    async def ct_build_initial_tokens(self, messages, tools=None, images=None, videos=None, audios=None):
        prompt_ids = await self.loop.run_in_executor(
            None, lambda: self.continuous_token_builder.build_initial_tokens(messages, tools=tools))
        prompt_length = self.rollout_config.prompt_length
        return prompt_ids[-prompt_length:] if len(prompt_ids) > prompt_length else prompt_ids

    async def ct_merge_non_assistant_msg(self, previous_messages, updated_messages, runtime_token_ids, response_mask,
                                         response_logprobs=None, tools=None):
        merge_result = await self.loop.run_in_executor(
            None, lambda: self.continuous_token_builder.merge_non_assistant_tokens(
                previous_messages, updated_messages, runtime_token_ids, tools=tools))
        mask, logprobs = self.continuous_token_builder.align_response_metadata(merge_result, response_mask,
                                                                               response_logprobs)
        return merge_result, mask, logprobs

    async def ct_merge_assistant_token(self, runtime_token_ids, assistant_token_ids, response_mask,
                                       response_logprobs=None, assistant_logprobs=None):
        merge_result = await self.loop.run_in_executor(
            None, lambda: self.continuous_token_builder.merge_assistant_tokens(runtime_token_ids, assistant_token_ids))
        mask, logprobs = self.continuous_token_builder.align_response_metadata(
            merge_result, response_mask, response_logprobs, assistant_logprobs=assistant_logprobs)
        return merge_result, mask, logprobs

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
    # (hydra passes nested entries on as omegaconf nodes: _convert_ is "none" by default)
    module, _, name = config["_target_"].rpartition(".")
    target = getattr(importlib.import_module(module), name)
    return target(**{k: v for k, v in config.items() if k not in ("_target_", "name")}, **kwargs)

class AgentLoopWorker:
    def __init__(self, config, llm_client, tokenizer, processor=None):
        self.config, self.llm_client, self.tokenizer, self.processor = config, llm_client, tokenizer, processor
        path = config.actor_rollout_ref.rollout.agent.agent_loop_config_path
        if path:  # agent_loop.py:502-509: the file's entries, as omegaconf nodes, into the registry
            from omegaconf import OmegaConf
            for entry in OmegaConf.load(path):
                _agent_loop_registry[entry.name] = entry

    async def _run_agent_loop(self, sampling_params, trajectory, *, agent_name, trace=True, **kwargs):
        assert agent_name in _agent_loop_registry, (
            f"Agent loop {agent_name} not registered, registered agent loops: {_agent_loop_registry.keys()}")
        agent_loop = _instantiate(_agent_loop_registry[agent_name], trainer_config=DictConfigWrap(self.config),
                                  server_manager=self.llm_client, tokenizer=self.tokenizer, processor=self.processor,
                                  hf_model_type=None, dataset_cls=None, data_config=DictConfigWrap(self.config.data),
                                  tools=ToolListWrap([]))
        output = await agent_loop.run(sampling_params, **kwargs)
        return self._agent_loop_postprocess(output, trajectory["validate"], **kwargs)

    def _compute_multi_modal_inputs(self, output):
        if self.processor is None:
            return {}
        # agent_loop.py:648 at b178a3cd (before 1dda039 guarded it with `or {}`, agent_loop.py:844)
        images = output.multi_modal_data.get("images")
        videos = output.multi_modal_data.get("videos")
        return {"images": images, "videos": videos}

    def _agent_loop_postprocess(self, output, validate, **kwargs):
        # agent_loop_tq.py:150-227 and AgentLoopOutput.as_dict (agent_loop.py:114-158), padded as
        # agent_loop.py:698-744 pads: prompt left-padded to prompt_length, response cut at response_length
        output.extra_fields["raw_prompt"] = kwargs["raw_prompt"]
        self._compute_multi_modal_inputs(output)
        rollout = self.config.actor_rollout_ref.rollout
        response_ids = list(output.response_ids[:rollout.response_length])
        response_mask = list(output.response_mask[:rollout.response_length])
        logprobs = None if output.response_logprobs is None else list(output.response_logprobs[:rollout.response_length])
        return {"uid": kwargs["uid"], "session_id": kwargs.get("session_id"), "prompt_ids": output.prompt_ids,
                "response_ids": response_ids, "response_mask": response_mask, "rollout_log_probs": logprobs,
                "reward_score": output.reward_score, "num_turns": output.num_turns,
                "multi_modal_data": output.multi_modal_data, "extra_fields": output.extra_fields,
                "data_source": kwargs.get("data_source"), "validate": validate}

    async def generate_sequences(self, rows, validate=False):
        # the legacy (v0) worker: one agent loop per row of the repeated batch (agent_loop.py:537-629)
        sampling_params = self._sampling_params(validate)
        tasks = [asyncio.create_task(self._run_agent_loop(
            sampling_params, {"validate": validate}, agent_name=self.config.actor_rollout_ref.rollout.agent.default_agent_loop,
            **row)) for row in rows]
        return await asyncio.gather(*tasks)

    def _sampling_params(self, validate):
        config = self.config.actor_rollout_ref.rollout
        params = dict(temperature=config.temperature, top_p=1.0, top_k=-1, repetition_penalty=1.0,
                      logprobs=config.calculate_log_probs)
        if validate:
            params["temperature"] = config.val_kwargs.temperature
        return params
'''

AGENT_LOOP_TQ = '''
import asyncio
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

class AgentLoopWorkerTQ(AgentLoopWorker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.session_errors = []  # logged by verl (agent_loop_tq.py:133-143), the group kept without them

    async def generate_sequences(self, prompts, validate=False):
        # agent_loop_tq.py:59-105: every prompt of the chunk runs in this worker
        sampling_params = self._sampling_params(validate)
        tasks = [asyncio.create_task(self._run_prompt(prompt, sampling_params, {"validate": validate}))
                 for prompt in prompts]
        return [record for records in await asyncio.gather(*tasks) for record in records]

    async def _run_prompt(self, prompt, sampling_params, trajectory):
        # agent_loop_tq.py:107-129: n sessions of the prompt, n = rollout.n or, validating, val_kwargs.n;
        # a session that raises is logged and dropped (its group is kept with the others)
        config = self.config.actor_rollout_ref.rollout
        prompt = dict(prompt)
        n = prompt.pop("__rollout_n__", config.n if not trajectory["validate"] else config.val_kwargs.n)
        agent_name = prompt.pop("agent_name", config.agent.default_agent_loop)
        tasks = [asyncio.create_task(self._run_agent_loop(sampling_params, trajectory=trajectory, agent_name=agent_name,
                                                          session_id=i, **prompt)) for i in range(n)]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for error in (r for r in results if isinstance(r, BaseException)):
            self.session_errors.append(f"Error in _run_prompt for uid={prompt['uid']}: {type(error).__name__}: {error}")
        return [r for r in results if not isinstance(r, BaseException)]
'''


def write_verl_package(directory):
    """Writes the model of verl (see the module's documentation) under directory/verl."""
    root = Path(directory) / "verl"
    files = {
        "__init__.py": INIT,
        "trainer/__init__.py": "",
        "trainer/ppo/__init__.py": "",
        "trainer/ppo/core_algos.py": CORE_ALGOS,
        "trainer/ppo/ray_trainer.py": RAY_TRAINER,
        "trainer/ppo/v1/__init__.py": "",
        "trainer/ppo/v1/agent_loop_tq.py": AGENT_LOOP_TQ,
        "utils/__init__.py": "",
        "utils/tokenizer/__init__.py": "",
        "utils/tokenizer/continuous_token.py": CONTINUOUS_TOKEN,
        "experimental/__init__.py": "",
        "experimental/agent_loop/__init__.py": "",
        "experimental/agent_loop/agent_loop.py": AGENT_LOOP,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def rlhf_dataset_item(row, prompt_key="prompt"):
    """RLHFDataset.__getitem__ (verl/utils/dataset/rl_dataset.py:386-411) on a text row: raw_prompt from the
    prompt column, extra_info's index, tools_kwargs and interaction_kwargs as columns of their own."""
    item = dict(row)
    item["raw_prompt"] = list(item[prompt_key])
    if item.get("extra_info") is None:
        item["extra_info"] = {}
    item["index"] = item["extra_info"].get("index", 0)
    item["tools_kwargs"] = item["extra_info"].get("tools_kwargs", {})
    item["interaction_kwargs"] = item["extra_info"].get("interaction_kwargs", {})
    return item


def write_installed_leap(directory, *, entry_point="leap.verl"):
    """A dist-info folder, as `pip install` of leap leaves one in site-packages, that declares pyproject.toml's
    `verl.plugins` entry point: importlib.metadata finds it on sys.path."""
    info = Path(directory) / "leap-0.0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: leap\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(f"[verl.plugins]\nleap = {entry_point}\n")
    return info


# ---- the scripted parts: a character tokenizer, the rollout server, a sandbox ---------------------------

class CharTokenizer:
    """Token = character code; the chat template writes <role>content and opens <assistant>. transformers 5
    tokenizers return a BatchEncoding (a mapping) from apply_chat_template(tokenize=True) unless
    return_dict=False: ``batch_encoding=True`` models that."""

    def __init__(self, batch_encoding=False):
        self.batch_encoding = batch_encoding
        self.pad_token_id = 0

    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)

    def apply_chat_template(self, messages, tools=None, add_generation_prompt=True, tokenize=True, return_dict=None,
                            **kwargs):
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + ("<assistant>" if add_generation_prompt else "")
        if not tokenize:
            return text
        ids = self.encode(text)
        if return_dict if return_dict is not None else self.batch_encoding:
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}
        return ids


def completion_text(task, member, turn, verdict, speedup, length=0):
    """What the scripted policy writes: a fenced kernel whose first line carries the plan's verdict and
    speedup, padded to `length` characters by a comment."""
    head = f"Here it is.\n```cuda\n// {task} sample {member} turn {turn}: {verdict} {speedup}\n"
    tail = "__global__ void k(float* x) { x[0] = 1; }\n```"
    padding = max(0, length - len(head) - len(tail) - 4)
    return head + (f"/*{'.' * padding}*/\n" if padding else "") + tail


class ScriptedServer:
    """verl's LLMServerClient.generate(request_id, *, prompt_ids, sampling_params) in front of vLLM: the k-th
    conversation of a task (in this worker, from `offsets[task]` on) follows plans[task][k], one
    (verdict, speedup[, length]) per turn, the last repeated. Generation stops at vLLM's max_tokens
    (vllm_async_server.py:566-597)."""

    def __init__(self, plans, offsets, rollout):
        self.plans, self.next = plans, dict(offsets)
        self.samples = {}
        self.prompt_length, self.response_length = int(rollout.prompt_length), int(rollout.response_length)
        self.max_model_len = self.prompt_length + self.response_length
        self.calls = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, video_data=None,
                       audio_data=None, mm_processor_kwargs=None, **kwargs):
        import asyncio
        from types import SimpleNamespace
        await asyncio.sleep(0)
        sampling_params = dict(sampling_params)
        max_possible = self.max_model_len - len(prompt_ids)
        if max_possible < 1:
            raise ValueError(f"Prompt length ({len(prompt_ids)}) leaves no room to generate")
        if "max_tokens" in sampling_params:
            max_tokens = sampling_params.pop("max_tokens")
        else:
            max_tokens = min(self.response_length, self.max_model_len - len(prompt_ids))
        max_tokens = max(1, min(max_tokens, max_possible))
        text = "".join(chr(i) for i in prompt_ids)
        task = text.split("Write the kernel for ", 1)[1].split("<", 1)[0]
        if request_id not in self.samples:
            self.samples[request_id] = [task, self.next.get(task, 0), 0]
            self.next[task] = self.next.get(task, 0) + 1
        state = self.samples[request_id]
        state[2] += 1
        plan = self.plans[task][state[1]]
        step = plan[min(state[2], len(plan)) - 1]
        completion = completion_text(task, state[1], state[2], step[0], step[1], step[2] if len(step) > 2 else 0)
        tokens = [ord(c) for c in completion][:max_tokens]
        self.calls.append({"request_id": request_id, "max_tokens": max_tokens, "generated": len(tokens)})
        logprobs = [-0.5] * len(tokens) if sampling_params.get("logprobs") else None
        return SimpleNamespace(token_ids=tokens, log_probs=logprobs, num_preempted=None, routed_experts=None,
                               extra_fields={}, stop_reason="length" if len(tokens) == max_tokens else "stop")


async def scripted_environment(task, completion, key):
    """The sandbox's part (an episode environment): the verdict and speedup the policy's script wrote into the
    kernel; a kernel cut short (no closing fence: the response ran out of room) does not compile; the
    verdict "lost" is an environment failure on every attempt (a dead-lettered request)."""
    import leap
    from leap.environment import extract_kernel
    text = completion.text
    if text.count("```") < 2:
        return leap.Evaluation(leap.Verdict.compile_error, float("nan"), "[sandbox] the kernel is cut short")
    kernel = extract_kernel(text)
    head = kernel.source.split("\n", 1)[0]
    claimed_task = head[3:].split(" sample ", 1)[0]
    verdict, speedup = head.rsplit(":", 1)[1].split()
    assert claimed_task == task, (claimed_task, task)
    if verdict == "lost":
        return leap.Evaluation.environment_failed(f"dead-lettered (attempt {key.attempt})")
    return leap.Evaluation(leap.Verdict.__members__[verdict], float(speedup) if speedup != "None" else float("nan"),
                           f"[sandbox] {verdict} on {head[3:]}")


# ---- the processes -------------------------------------------------------------------------------------

def _enter(actor_env, sys_path):
    """What Ray does before an actor's code runs: the job's runtime_env env_vars set, and this process's
    own search path (its interpreter's, plus PYTHONPATH)."""
    os.environ.update(actor_env)
    sys.path[:] = list(sys_path)


def actor_sys_path(actor_env, tests_dir, hide=()):
    """An actor's sys.path: PYTHONPATH from its environment, this folder (for the model's own functions)
    and the interpreter's standard paths, less the folders in `hide`; nothing else from the launcher."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    hidden = {os.path.realpath(h) for h in hide}
    own = [p for p in actor_env.get("PYTHONPATH", "").split(os.pathsep) if p]
    base = [p for p in sys.path if p and p not in inherited and not p.startswith(str(tests_dir))
            and os.path.abspath(p) != os.path.abspath(os.getcwd())]
    return [p for p in own + [str(tests_dir)] + base if os.path.realpath(p) not in hidden]


def _worker_main(connection, actor_env, sys_path, config, plans, legacy, processor):
    """An AgentLoopWorker(TQ) actor: `import verl` at start, then generate_sequences per request."""
    try:
        _enter(actor_env, sys_path)
        import asyncio
        import warnings
        import verl  # noqa: F401 - Ray unpickles the actor class, importing verl first
        if legacy:
            from verl.experimental.agent_loop.agent_loop import AgentLoopWorker as Worker
        else:
            from verl.trainer.ppo.v1.agent_loop_tq import AgentLoopWorkerTQ as Worker
        connection.send(("ready", None))
        while True:
            message = connection.recv()
            if message is None:
                return
            rows, validate, offsets = message
            server = ScriptedServer(plans, offsets, config.actor_rollout_ref.rollout)
            worker = Worker(config, server, CharTokenizer(), processor)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                records = asyncio.run(worker.generate_sequences(rows, validate))
            errors = list(getattr(worker, "session_errors", []))
            connection.send(("ok", (records, [str(w.message) for w in caught], server.calls, errors)))
    except BaseException:  # noqa: BLE001 - sent to the task runner, as Ray sends an actor's error
        connection.send(("error", traceback.format_exc()))


class _Actor:
    def __init__(self, context, target, args):
        self.connection, child = context.Pipe()
        self.process = context.Process(target=target, args=(child, *args))  # it starts actors of its own
        self.process.start()

    def call(self, message):
        self.connection.send(message)
        return self.connection.recv()

    def close(self):
        try:
            self.connection.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


class ActorError(RuntimeError):
    """An actor's error, as ray.get raises it: the actor's traceback in the message."""


def _task_runner_main(connection, actor_env, sys_path, config, dataset, val_dataset, plans, processor):
    """TaskRunnerV1.run (main_ppo.py:133-163) with PPOTrainer.init and fit, trimmed to what leap touches."""
    report = {"rollouts": 0, "phase": "start-up"}
    workers = []
    try:
        _enter(actor_env, sys_path)
        import multiprocessing
        import uuid
        import numpy as np
        import torch
        import verl  # noqa: F401 - the actor class lives in verl.trainer.main_ppo, which imports verl
        from verl.trainer.ppo.ray_trainer import compute_advantage
        context = multiprocessing.get_context("spawn")
        rollout = config.actor_rollout_ref.rollout
        legacy = not config.trainer.get("use_v1", True)
        for _ in range(rollout.agent.num_workers):  # agent_loop.py:1177-1199: made at start-up
            workers.append(_Actor(context, _worker_main, (actor_env, sys_path, config, plans, legacy, processor)))
        for worker in workers:
            status, detail = worker.connection.recv()
            if status != "ready":
                raise ActorError(detail)
        report["phase"] = "rollout"

        def rollout_batch(rows, validate):
            rows = [dict(row, uid=str(uuid.uuid4())) for row in rows]
            n = rollout.val_kwargs.n if validate else rollout.n
            if legacy:  # the v0 driver: repeat(n, interleave=True), then equal contiguous chunks
                repeated = [dict(row) for row in rows for _ in range(n)]
                size = len(repeated) // len(workers)
                chunks = [repeated[i * size:(i + 1) * size] for i in range(len(workers))]
            else:       # AgentLoopManagerTQ.generate_sequences: the prompts chunked (agent_loop_tq.py:243-257)
                size = -(-len(rows) // len(workers))
                chunks = [rows[i * size:(i + 1) * size] for i in range(len(workers))]
            seen, calls, records, warnings, errors = {}, [], [], [], []
            for worker, chunk in zip(workers, chunks):
                offsets = {}
                for row in chunk:
                    task = row["extra_info"]["leap_task"]
                    offsets.setdefault(task, seen.get(row["uid"], 0))
                    seen[row["uid"]] = seen.get(row["uid"], 0) + (1 if legacy else n)
                worker.connection.send((chunk, validate, offsets))
            for worker in workers:
                status, detail = worker.connection.recv()
                if status != "ok":
                    raise ActorError(detail)
                records.extend(detail[0])
                warnings.extend(detail[1])
                calls.extend(detail[2])
                errors.extend(detail[3])
            report["rollouts"] += 1
            report.setdefault("session_errors", []).extend(errors)
            report.setdefault("warnings", []).extend(warnings)
            if not records:  # replay_buffer.py:488-493
                raise RuntimeError("Sync replay buffer selected terminal groups with no materializable trajectories.")
            return records, warnings, calls

        def tensors(records):
            R = rollout.response_length
            rows = len(records)
            response_mask = torch.zeros((rows, R), dtype=torch.long)
            responses = torch.zeros((rows, R), dtype=torch.long)
            rm_scores = torch.zeros((rows, R), dtype=torch.float32)
            for i, record in enumerate(records):
                length = len(record["response_ids"])
                responses[i, :length] = torch.tensor(record["response_ids"], dtype=torch.long)
                response_mask[i, :length] = torch.tensor(record["response_mask"], dtype=torch.long)
                if record["reward_score"] is not None and length:
                    rm_scores[i, length - 1] = record["reward_score"]
            return {"responses": responses, "response_mask": response_mask, "rm_scores": rm_scores,
                    "uid": np.array([r["uid"] for r in records], dtype=object)}

        result = {}
        if val_dataset is not None and config.trainer.get("val_before_train", True):  # trainer_base.py:414-420
            records, warnings, calls = rollout_batch(val_dataset, validate=True)
            infos = {}
            for record in records:
                for key, value in record["extra_fields"].get("reward_extra_info", {}).items():
                    infos.setdefault(key, []).append(value)
            result["validation"] = {"records": records, "warnings": warnings, "calls": calls,
                                    "metrics": {key: float(np.mean(values)) for key, values in infos.items()
                                                if all(isinstance(v, (int, float)) for v in values)}}
        records, warnings, calls = rollout_batch(dataset, validate=False)
        # trainer_base.py:1638-1690: token_level_rewards = rm_scores (no KL in the reward), then the estimator
        report["phase"] = "advantage"
        data = tensors(records)
        data["token_level_scores"] = data["token_level_rewards"] = data["rm_scores"]
        algorithm = config.algorithm
        data = compute_advantage(data, adv_estimator=algorithm.adv_estimator, gamma=algorithm.gamma, lam=algorithm.lam,
                                 num_repeat=rollout.n, norm_adv_by_std_in_grpo=algorithm.get("norm_adv_by_std_in_grpo", True),
                                 config=algorithm)
        result.update(records=records, warnings=warnings, calls=calls, advantages=data["advantages"],
                      response_mask=data["response_mask"], responses=data["responses"], rm_scores=data["rm_scores"])
        report["result"] = result
        connection.send(("ok", report))
    except BaseException:  # noqa: BLE001
        report["error"] = traceback.format_exc()
        connection.send(("error", report))
    finally:
        for worker in workers:
            worker.close()


def ray_runtime_env(config):
    """main_ppo.py:62-74: verl's default runtime env (constants_ppo.get_ppo_ray_runtime_env, trimmed to
    its env_vars) merged with ``ray_kwargs.ray_init.runtime_env``."""
    from omegaconf import OmegaConf
    default = {"env_vars": {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN"}}
    configured = config.get("ray_kwargs", {}).get("ray_init", {}).get("runtime_env", {}) or {}
    merged = OmegaConf.to_container(OmegaConf.merge(OmegaConf.create(default), configured), resolve=True)
    return {k: v for k, v in merged.items() if v is not None}


def run_ppo(config, dataset, plans, *, launcher_env, val_dataset=None, processor=None, hide=(), timeout=240):
    """main_ppo.run_ppo: ray.init with the runtime env, then TaskRunnerV1.run in its own process. The
    actors' environment is `launcher_env` (what the node's Ray workers inherit: the launcher's environment
    for a local cluster) with the runtime env's env_vars on top. Returns the task runner's report: the
    number of rollouts done, and the result or the error (its traceback). `hide`: folders no actor can
    import from (a node where a package is not installed)."""
    import multiprocessing
    runtime_env = ray_runtime_env(config)
    actor_env = dict(launcher_env)
    actor_env.update({k: str(v) for k, v in runtime_env.get("env_vars", {}).items()})
    tests_dir = Path(__file__).resolve().parent
    sys_path = actor_sys_path(actor_env, tests_dir, hide)
    context = multiprocessing.get_context("spawn")
    runner = _Actor(context, _task_runner_main, (actor_env, sys_path, config, dataset, val_dataset, plans, processor))
    if not runner.connection.poll(timeout):
        runner.process.kill()
        raise TimeoutError(f"the task runner did not finish within {timeout} s")
    status, report = runner.connection.recv()
    runner.process.join(30)
    if runner.process.is_alive():
        runner.process.kill()
    return report
